"""MkDocs hook: figures in the pages come from the pipeline's files, never from typing.

HOW TO USE IT IN A PAGE (any Markdown file under docs/)
-------------------------------------------------------
Before Markdown is converted, every page that contains ``{{`` or ``{%`` is
rendered as a Jinja2 template (strict: an unknown name, a missing evidence
path or a bad format stops ``mkdocs build`` with the page and the path). Put
``macros: false`` in a page's front matter to switch this off for that page.
Inside code blocks write ``{% raw %}...{% endraw %}`` if the code has ``{{``.

Figures (each becomes ``<span class="ev" data-ev="PATH" ...>text</span>``;
``tests/site_build/test_figures_come_from_files.py`` re-reads every such span in the built site
and checks it against the file it names):

    {{ ev("aggregates.four_heads.perplexity_mean", ".2f") }}   -> 28.78
    {{ ev("audit.train.stories", ",") }}                       -> 4,800
    {{ ev("comparison.relative_change_four_vs_one", ".1%", fn="abs") }}
    {{ ev("stories.long.0.token_count") }}     list items by index (-1: last)
    {{ wt("loss", ".3f") }}      wasm_assets/walkthrough.json (export/walkthrough.py)
    {{ toy("n_targets") }}       the Lily toy (page_data.json "toy": export.lesson.walkthrough.lily_example())
    {{ vocab_id("lily") }}       the token's id in wasm_assets/vocab.json

``fmt`` is a Python format spec (``".2f"``, ``","``, ``".1%"``, ``""``);
``fn`` is an optional transform applied first: ``abs``, ``neg``, ``exp``.
To compute with values use ``val(path)`` (evidence), ``wt_val``,
``toy_val``; for example ``{% if val("comparison.four_heads_better_beyond_spread") %}``.
``has(path)`` tells whether a path exists. ``authored(x)`` marks a number
that is authored arithmetic (e.g. the 1/4 perplexity example), not a
measurement; the figures test allows numbers only inside macros.

Tables and blocks (Markdown/HTML strings):

    {{ runs_table() }}  {{ aggregates_table() }}  {{ audit_table() }}
    {{ story("stories.excerpt") }}      a credited quotation (long ones shortened with [...])

Check-yourself questions (mounted by ``site_src/js/lesson/quiz.js``; without JS the
answer sits in a ``<details>``):

    {% call quiz("Is PAD ever a target?",
                 [["No, it only fills empty input slots.", "Right: targets are real tokens or EOS."],
                  ["Yes, at the end of every story.", "No: a story ends with EOS, which is a target."]],
                 correct=0) %}
    Markdown explanation, shown after the learner answers.
    {% endcall %}

Every option is a pair: its text and one sentence saying why it is right or
wrong (shown next to it once the learner has answered). ``correct`` is the
index in the list as written; the page shows the options in a shuffled order
that is fixed per question (seeded by the question's text, see
``quiz_order``), so the position of the right answer carries no hint.
``tests/site_build/test_quiz_balance.py`` checks, over the whole site, that no position
holds more than 40 % of the right answers and that the right answer is not
usually the longest; if a new question breaks the balance, pass
``order_seed=N`` to that question to draw another fixed order.

Options and question are inline Markdown; the explanation is block Markdown.
The markup (see ``quiz_html`` below): a ``div.mha-quiz[data-mha-widget=quiz]``
holding ``p.mha-quiz__question``,
``ol.mha-quiz__options > li.mha-quiz__option[data-correct=true|false]`` and
``details.mha-quiz__explanation``, which holds the answer, the explanation and
``ol.mha-quiz__whys`` (one ``li`` per option, in the order shown).

Page 5's interpretation figures (``export/lesson/results.py``, computed from
the evidence by ``python -m export pagedata`` into ``page_data.json``): ``{{ res("parameters.four_heads.parts.vocab_head.share", ".1%") }}``,
``res_val(path)``, ``{{ parameter_table() }}``, ``{{ attention_cost_table() }}``.
"""
from __future__ import annotations

import html
import sys
from pathlib import Path

import jinja2
from markupsafe import Markup
from mkdocs.exceptions import Abort, PluginError

_HOOKS = str(Path(__file__).resolve().parent)  # the page_macros package sits next to this hook
if _HOOKS not in sys.path:
    sys.path.append(_HOOKS)
from page_macros import page3, page4, page5, tables  # noqa: E402
from page_macros.engine import (DATA, MacroError, _grid, authored, ev, format_value, has, lookup, res, res_val,  # noqa: E402,F401
                                toy, toy_val, val, vocab_id, wt, wt_val)
from page_macros.page5 import WEAK_LEAN, _kind, _ko, compare_link  # noqa: E402
from page_macros.quiz import QUIZ_SALT, quiz, quiz_html, quiz_order  # noqa: E402,F401  (tests call them here)


# ---------------------------------------------------------------------------
# Page 5's prose about the heads (issue 23 moves it into the page's Markdown).

def knockout_summary() -> Markup:
    """Which head the model leans on most and least, in words, from the knock-out numbers."""
    ko = val("heads.knockout")
    heads = len(ko["all"]["mask"])
    without = sorted(range(1, heads + 1), key=lambda h: ko[f"without_{h}"]["test_perplexity"])
    least, most = without[0], without[-1]
    best_alone = min(range(1, heads + 1), key=lambda h: ko[f"only_{h}"]["test_perplexity"])
    return Markup(
        f"With all four heads the shipped model's test perplexity is {_ko('all', 'test_perplexity', '.2f')}. "
        f"The model leans most on **head {most}**: without it perplexity rises to "
        f"{_ko(f'without_{most}', 'test_perplexity', '.2f')} ({_ko(f'without_{most}', 'perplexity_change', '+.0%')}), "
        f"and its top next token changes in {_ko(f'without_{most}', 'top_token_changed', '.0%')} of the test windows. "
        f"Removing **head {least}** costs least ({_ko(f'without_{least}', 'perplexity_change', '+.0%')}), though "
        f"even that is not nothing. No single head carries the model: the best one kept alone, head {best_alone}, "
        f"still leaves perplexity at {_ko(f'only_{best_alone}', 'test_perplexity', '.2f')}, and with every head "
        f"switched off it is {_ko('none', 'test_perplexity', '.2f')}.")


def head_atlas_figure() -> Markup:
    """The generated atlas figure with its caption and, as its text alternative, the same numbers as a table."""
    kinds = list(val("heads.kinds"))
    header = ["head", *[_kind(k) for k in kinds]]
    body = []
    for model in ("one_head", "four_heads"):
        for i, head in enumerate(val(f"heads.atlas.{model}.heads")):
            label = "One head" if model == "one_head" else f"Four heads, head {head['head']}"
            cells = "".join(f"<td>{ev(f'heads.atlas.{model}.heads.{i}.share.{k}', '.1%')}</td>" for k in kinds)
            body.append(f'<tr><th scope="row">{label}</th>{cells}</tr>')
    cells = "".join(f"<td>{ev(f'heads.atlas.four_heads.uniform.{k}', '.1%')}</td>" for k in kinds)
    body.append(f'<tr><th scope="row">Spread evenly</th>{cells}</tr>')
    table = _grid("Average share of the final position's attention per kind of source (the figure's numbers)",
                  header, body)
    alt = ("Bar chart: for each head of the one-head and four-head models, the average share of attention on the "
           "final token itself, one to eight or more tokens back, the story-start marker, punctuation, an earlier "
           "occurrence of the same word and the token after it; the numbers are in the table below the figure.")
    return Markup(
        f'\n\n<figure class="mha-figure mha-atlas"><div class="mha-atlas__scroll">'
        f'<img src="../../wasm_assets/{html.escape(val("heads.figure"))}" alt="{html.escape(alt)}" width="830" '
        f'style="max-width:100%;height:auto;background:#fff"></div>'
        f'<figcaption>Where each head looks, on average over the {ev("heads.windows", ",")} windows of the test '
        f'split: seed-{ev("heads.seed")} models, the same weights the compare page runs. Head colours are the '
        f'ones the compare page uses.</figcaption></figure>\n\n'
        f'<details class="mha-atlas__data"><summary>The atlas as a table</summary>{table}</details>\n\n')


def head_descriptions() -> Markup:
    """One evidence-backed paragraph per head: what it favours, what removing it costs, its clearest window."""
    items = []
    for model in ("four_heads", "one_head"):
        for i, head in enumerate(val(f"heads.atlas.{model}.heads")):
            p = f"heads.atlas.{model}.heads.{i}"
            first, second = head["ranked_kinds"][:2]
            name = "Four heads, head " + str(head["head"]) if model == "four_heads" else "The one-head model's head"
            colour = html.escape(val(f"heads.colours.{model}")[head["head"] - 1])
            lean = head["share"][first] / val(f"heads.atlas.{model}.uniform.{first}")
            opening = (f"Above an even spread it favours {_kind(first)}" if lean >= WEAK_LEAN else
                       f"It spreads its attention close to evenly; its largest lean, a slight one, is toward "
                       f"{_kind(first)}")
            text = (f'<span class="mha-swatch" style="background:{colour}" aria-hidden="true"></span>'
                    f'<strong>{name}.</strong> {opening}: '
                    f'{ev(f"{p}.share.{first}", ".0%")} of its attention on average, against '
                    f'{ev(f"heads.atlas.{model}.uniform.{first}", ".0%")} if spread evenly; next, {_kind(second)} '
                    f'({ev(f"{p}.share.{second}", ".0%")} against {ev(f"heads.atlas.{model}.uniform.{second}", ".0%")}). '
                    f'On average it looks {ev(f"{p}.mean_distance", ".1f")} tokens back.')
            if model == "four_heads":
                ko = f"without_{head['head']}"
                text += (f' Switched off, test perplexity goes to {_ko(ko, "test_perplexity", ".2f")} '
                         f'({_ko(ko, "perplexity_change", "+.0%")}).')
            c = head["clearest"]
            top = c["top_sources"][0]
            text += (f' Its clearest test window (the largest share on {_kind(head["signature"])}: '
                     f'{ev(f"{p}.clearest.share", ".0%")}) ends “…&#8202;{html.escape(lookup(DATA.get("page_data"), f"heads.clearest_endings.{model}.{i}", "page_data"))}”; '
                     f'there it puts {ev(f"{p}.clearest.top_sources.0.weight", ".0%")} on '
                     f'<code>{html.escape(top["token"])}</code>, {ev(f"{p}.clearest.top_sources.0.offset")} back. '
                     f'<a href="{compare_link(c["prompt"], model, head["head"])}">Open this window in the compare '
                     f'page’s inspector</a>.')
            items.append(f"<li>{text}</li>")
    return Markup('\n\n<ul class="mha-head-list">' + "".join(items) + "</ul>\n\n")


def head_knockout_quiz() -> Markup:
    """Predict which head's removal changes the top next token most often; every option explained from the evidence."""
    ko = val("heads.knockout")
    heads = len(ko["all"]["mask"])
    share = {h: ko[f"without_{h}"]["top_token_changed"] for h in range(1, heads + 1)}
    correct = max(share, key=share.get) - 1
    options = []
    for h in range(1, heads + 1):
        k = f"without_{h}"
        verdict = "Right" if h - 1 == correct else "Not this one"
        options.append([f"Head {h}", f"{verdict}: without it the top next token changes in "
                                     f"{_ko(k, 'top_token_changed', '.1%')} of the test windows and perplexity "
                                     f"goes to {_ko(k, 'test_perplexity', '.2f')}."])
    lines = []
    lines.append("A head that most windows lean on for a sharp, nearby clue changes the top choice most often. "
                 f'Now try it: <a href="{compare_link(val("preset.prompt"), "four_heads", correct + 1)}">open the '
                 "preset opening in the inspector</a>, switch that head off and watch the five most likely next "
                 "tokens move; then press Continue to see the story without it.")
    return Markup("\n\n" + quiz_html(
        "Before you look at the table: which head of the four-head model, switched off alone, changes the "
        "model's most likely next token in the largest share of test windows?",
        options, correct, "\n".join(lines)) + "\n\n")


MACROS = {
    "ev": ev, "wt": wt, "toy": toy, "val": val, "wt_val": wt_val, "toy_val": toy_val, "has": has,
    "vocab_id": vocab_id, "authored": authored, "quiz": quiz,
    "runs_table": tables.runs_table, "aggregates_table": tables.aggregates_table,
    "audit_table": tables.audit_table, "story": tables.story,
    "toy_vocab_table": page3.toy_vocab_table, "toy_window_table": page3.toy_window_table,
    "real_prefix_table": page3.real_prefix_table,
    "wt_matrix": page4.wt_matrix, "wt_mask": page4.wt_mask, "wt_final_weights": page4.wt_final_weights,
    "top_table": page4.top_table,
    "res": res, "res_val": res_val, "parameter_table": page5.parameter_table,
    "attention_cost_table": page5.attention_cost_table, "knockout_table": page5.knockout_table,
    "knockout_summary": knockout_summary, "head_atlas_figure": head_atlas_figure,
    "head_descriptions": head_descriptions, "head_knockout_quiz": head_knockout_quiz,
}


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)
    env.globals.update(MACROS)
    env.globals["fmt"] = format_value
    return env


# ---------------------------------------------------------------------------
# MkDocs events.

def on_pre_build(config) -> None:
    DATA.cache.clear()


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.meta.get("macros") is False or ("{{" not in markdown and "{%" not in markdown):
        return markdown
    where = page.file.src_uri
    try:
        return _environment().from_string(markdown).render(page=page)
    except MacroError as exc:
        raise PluginError(f"{where}: {exc}") from None
    except jinja2.TemplateError as exc:
        line = getattr(exc, "lineno", None)
        raise PluginError(f"{where}{f' line {line}' if line else ''}: {type(exc).__name__}: {exc}") from None
    except Abort:
        raise
    except Exception as exc:  # a macro failing in Python: still say which page
        raise PluginError(f"{where}: {type(exc).__name__}: {exc}") from None
