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

    {{ ev("protocol.updates", ",") }}                          -> 6,000
    {{ ev("audit.train.stories", ",") }}                       -> 4,800
    {{ ev("comparison.relative_change_four_vs_one", ".1%", fn="abs") }}
    {{ ev("stories.long.0.token_count") }}     list items by index (-1: last)
    {{ wt("loss", ".3f") }}      wasm_assets/walkthrough.json (export/walkthrough.py)
    {{ toy("n_targets") }}       the Lily toy (page_data.json "toy": export.lesson.walkthrough.lily_example())
    {{ vocab_id("lily") }}       the token's id in wasm_assets/vocab.json
    {{ ex("chosen.score", ".2f") }}  wasm_assets/example_search.json (page 1's sentence search)

``fmt`` is a Python format spec (``".2f"``, ``","``, ``".1%"``, ``""``);
``fn`` is an optional transform applied first: ``abs``, ``neg``, ``exp``.
To compute with values use ``val(path)`` (evidence), ``wt_val``,
``toy_val``; for example ``{% if val("paired.source.<model>.outcome") == "behind" %}``.
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
the evidence by ``python -m export pagedata`` into ``page_data.json``): ``{{ res("parameters.<model>.parts.vocab_head.share", ".1%") }}``,
``res_val(path)``, ``{{ parameter_table() }}``, ``{{ attention_cost_table() }}``, ``{{ sweep_table() }}``.

The running sentence read by the four-head model (``page_data.json`` "running",
``page_macros/running.py``): ``{{ first_screen() }}`` (the home page's first
figure, with its live button) and ``{{ head_effect_bars() }}`` (page 5: the
guess's probability with all heads and with each head switched off).
"""

from __future__ import annotations

import sys
from pathlib import Path

import jinja2
from markupsafe import Markup
from mkdocs.exceptions import Abort, PluginError

_HOOKS = str(Path(__file__).resolve().parent)  # the page_macros package sits next to this hook
if _HOOKS not in sys.path:
    sys.path.append(_HOOKS)
from page_macros import microgpt, page3, page4, page5, running, tables
from page_macros.engine import (
    DATA,
    MacroError,
    _grid,
    authored,
    ev,
    ex,
    ex_val,
    format_value,
    has,
    lookup,  # noqa: F401
    mh,
    mh_val,
    page_data_val,
    res,
    res_val,
    toy,
    toy_val,
    val,
    vocab_id,
    wt,
    wt_val,
)
from page_macros.page5 import WEAK_LEAN, _kind, compare_link
from page_macros.quiz import QUIZ_SALT, quiz, quiz_html, quiz_order  # noqa: F401  (tests call them here)


# ---------------------------------------------------------------------------
# Page 5's words about the heads live in its Markdown; these give them their numbers.


def head_ranks() -> dict:
    """Which head the knock-outs rank first and last (numbers only: page 5 words them)."""
    ko = val("heads.knockout")
    heads = len(ko["all"]["mask"])
    without = sorted(range(1, heads + 1), key=lambda h: ko[f"without_{h}"]["test_perplexity"])
    return {
        "heads": heads,
        "least": without[0],
        "most": without[-1],
        "best_alone": min(range(1, heads + 1), key=lambda h: ko[f"only_{h}"]["test_perplexity"]),
        "most_changed": max(range(1, heads + 1), key=lambda h: ko[f"without_{h}"]["top_token_changed"]),
    }


def head_atlas_figure() -> Markup:
    """The generated atlas figure with its caption and, as its text alternative, the same numbers as a table."""
    kinds = list(val("heads.kinds"))
    header = ["head", *[_kind(k) for k in kinds]]
    body = []
    # the atlas's models, fewest heads first (the one-head model, then the one whose heads the lesson takes apart)
    models = sorted(val("heads.atlas"), key=lambda m: len(val(f"heads.atlas.{m}.heads")))
    for model in models:
        name = val(f"protocol.labels.{model}")
        for i, head in enumerate(val(f"heads.atlas.{model}.heads")):
            label = name if len(val(f"heads.atlas.{model}.heads")) == 1 else f"{name}, head {head['head']}"
            cells = "".join(f"<td>{ev(f'heads.atlas.{model}.heads.{i}.share.{k}', '.1%')}</td>" for k in kinds)
            body.append(f'<tr><th scope="row">{label}</th>{cells}</tr>')
    cells = "".join(f"<td>{ev(f'heads.atlas.{models[-1]}.uniform.{k}', '.1%')}</td>" for k in kinds)
    body.append(f'<tr><th scope="row">Spread evenly</th>{cells}</tr>')
    table = _grid(
        "Average share of the final position's attention per kind of source (the figure's numbers)", header, body
    )
    # The figure itself is drawn by the figures hook (site_src/hooks/lesson_figures/results.py) from heads.json,
    # in the site's themed SVG; this macro adds its numbers as a table.
    return Markup(
        "\n\n::figure:: head-atlas\n\n"
        f'<details class="mha-atlas__data"><summary>The atlas as a table</summary>{table}</details>\n\n'
    )


MACROS = {
    "ev": ev,
    "wt": wt,
    "toy": toy,
    "val": val,
    "wt_val": wt_val,
    "toy_val": toy_val,
    "has": has,
    "vocab_id": vocab_id,
    "authored": authored,
    "quiz": quiz,
    "runs_table": tables.runs_table,
    "aggregates_table": tables.aggregates_table,
    "audit_table": tables.audit_table,
    "story": tables.story,
    "toy_vocab_table": page3.toy_vocab_table,
    "toy_window_table": page3.toy_window_table,
    "real_prefix_table": page3.real_prefix_table,
    "wt_matrix": page4.wt_matrix,
    "wt_mask": page4.wt_mask,
    "wt_final_weights": page4.wt_final_weights,
    "top_table": page4.top_table,
    "res": res,
    "res_val": res_val,
    "parameter_table": page5.parameter_table,
    "attention_cost_table": page5.attention_cost_table,
    "knockout_table": page5.knockout_table,
    "sweep_table": page5.sweep_table,
    "paired_table": page5.paired_table,
    "head_atlas_figure": head_atlas_figure,
    # page 5 words these in its Markdown, so a sentence is edited where it is read: numbers, links and page-data text only
    "head_ranks": head_ranks,
    "compare_link": compare_link,
    "WEAK_LEAN": WEAK_LEAN,
    "page_data_val": page_data_val,
    "ex": ex,
    "ex_val": ex_val,
    # the running sentence read by the four-head model: the home page's first screen, page 5's per-head bars
    "first_screen": running.first_screen,
    "live_download": running.live_download,
    "head_effect_bars": running.head_effect_bars,
    # the microgpt page: where its heads matter (wasm_assets/microgpt_heads.json)
    "mh": mh,
    "mh_val": mh_val,
    "mh_loss_table": microgpt.loss_table,
    "mh_lean_list": microgpt.lean_list,
    "mh_top_example": microgpt.top_example,
}


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        loader=jinja2.FileSystemLoader(Path(_HOOKS) / "page_macros" / "templates"),
    )
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
