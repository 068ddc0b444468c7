"""MkDocs hook: figures in the pages come from the pipeline's files, never from typing.

HOW TO USE IT IN A PAGE (any Markdown file under docs/)
-------------------------------------------------------
Before Markdown is converted, every page that contains ``{{`` or ``{%`` is
rendered as a Jinja2 template (strict: an unknown name, a missing evidence
path or a bad format stops ``mkdocs build`` with the page and the path). Put
``macros: false`` in a page's front matter to switch this off for that page.
Inside code blocks write ``{% raw %}...{% endraw %}`` if the code has ``{{``.

Figures (each becomes ``<span class="ev" data-ev="PATH" ...>text</span>``;
``tests/test_lesson_figures.py`` re-reads every such span in the built site
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
                 correct=0, hint="Ask which tokens a story's targets can be.") %}
    Markdown explanation, shown after the learner answers.
    {% endcall %}

Every option is a pair: its text and one sentence saying why it is right or
wrong (shown next to it once the learner has answered). ``hint`` is one sentence
that points at the idea, not at an option: a first wrong try shows it ("not
yet") and lets the learner try again; the answer and the reasons appear after a
second wrong try or on request. ``correct`` is the
index in the list as written; the page shows the options in a shuffled order
that is fixed per question (seeded by the question's text, see
``quiz_order``), so the position of the right answer carries no hint.
``tests/test_quiz_balance.py`` checks, over the whole site, that no position
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

import hashlib
import html
import json
import logging
import math
import random
import re
from typing import Any

import jinja2
import markdown as md_lib
from markupsafe import Markup
from mkdocs.exceptions import Abort, PluginError

import export.artefacts as artefacts  # standard library only: the build reads files, never computes

log = logging.getLogger("mkdocs.hooks.evidence_macros")

# Each macro source is a file the pipeline wrote (or a part of page_data.json).
SOURCES = {"evidence": "evidence", "walkthrough": "walkthrough", "vocab": "vocab", "page_data": "page_data"}
PAGE_DATA_PARTS = ("toy", "results")  # sources that are a part of page_data.json
TRANSFORMS = {"abs": abs, "neg": lambda x: -x, "exp": math.exp}


class MacroError(Exception):
    pass


# ---------------------------------------------------------------------------
# Values and formatting (the figures test imports these two functions).

def lookup(data: Any, path: str, source: str = "evidence") -> Any:
    """``a.b.0.c`` in nested dicts/lists; raises MacroError naming what is missing."""
    cur = data
    done: list[str] = []
    for part in path.split("."):
        if isinstance(cur, list):
            try:
                cur = cur[int(part)]
            except (ValueError, IndexError):
                raise MacroError(f"{source} path {path!r}: {'.'.join(done) or 'the root'} is a list of "
                                 f"{len(cur)} items, {part!r} is not an index in it") from None
        elif isinstance(cur, dict):
            if part not in cur:
                keys = ", ".join(sorted(map(str, cur))[:20])
                raise MacroError(f"{source} path {path!r}: {'.'.join(done) or 'the root'} has no key "
                                 f"{part!r} (it has: {keys})")
            cur = cur[part]
        else:
            raise MacroError(f"{source} path {path!r}: {'.'.join(done)} is a {type(cur).__name__}, not a container")
        done.append(part)
    return cur


def format_value(value: Any, fmt: str = "", fn: str | None = None) -> str:
    if fn:
        if fn not in TRANSFORMS:
            raise MacroError(f"unknown transform fn={fn!r}; use one of {', '.join(TRANSFORMS)}")
        value = TRANSFORMS[fn](value)
    if value is None:
        raise MacroError("the value is null (not measured in this evidence)")
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):  # ids or shapes: [1, 8, 7]; fmt="tokens": lily · found · a
        if fmt == "tokens":
            return " · ".join(str(v) for v in value)
        return "[" + ", ".join(format_value(v, fmt) for v in value) + "]"
    try:
        return format(value, fmt)
    except (ValueError, TypeError) as exc:
        raise MacroError(f"cannot format {value!r} with {fmt!r}: {exc}") from None


# ---------------------------------------------------------------------------
# Data loaded once per build.

class _Data:
    def __init__(self) -> None:
        self.cache: dict[str, Any] = {}

    def get(self, source: str) -> Any:
        if source not in self.cache:
            if source in PAGE_DATA_PARTS:
                self.cache[source] = self.get("page_data")[source]
            else:
                path = getattr(artefacts.Artefacts(), SOURCES[source])
                if not path.is_file():
                    hint = {"walkthrough": "run `python -m export walkthrough`",
                            "page_data": "run `python -m export pagedata`"}.get(
                                source, "run `make models` (python -m export all)")
                    raise MacroError(f"{path} does not exist: {hint}")
                doc = json.loads(path.read_text())
                if source == "vocab":
                    doc["stoi"] = {t: i for i, t in enumerate(doc["itos"])}
                self.cache[source] = doc
        return self.cache[source]


DATA = _Data()


def _span(source: str, path: str, fmt: str, fn: str | None, text: str) -> Markup:
    attrs = f' data-ev="{html.escape(path)}"'
    if source != "evidence":
        attrs += f' data-ev-src="{source}"'
    if fmt:
        attrs += f' data-ev-fmt="{html.escape(fmt)}"'
    if fn:
        attrs += f' data-ev-fn="{fn}"'
    cls = "ev ev-long" if len(text) > 20 else "ev"  # long lists and texts may wrap
    return Markup(f'<span class="{cls}"{attrs}>{html.escape(text)}</span>')


def _figure(source: str):
    def macro(path: str, fmt: str = "", fn: str | None = None) -> Markup:
        value = lookup(DATA.get(source), path, source)
        return _span(source, path, fmt, fn, format_value(value, fmt, fn))
    return macro


def _value(source: str):
    def macro(path: str) -> Any:
        return lookup(DATA.get(source), path, source)
    return macro


ev = _figure("evidence")
wt = _figure("walkthrough")
toy = _figure("toy")
val = _value("evidence")
wt_val = _value("walkthrough")
toy_val = _value("toy")
res = _figure("results")
res_val = _value("results")


def has(path: str, source: str = "evidence") -> bool:
    try:
        lookup(DATA.get(source), path, source)
        return True
    except MacroError:
        return False


def vocab_id(token: str) -> Markup:
    vocab = DATA.get("vocab")
    if token not in vocab["stoi"]:
        raise MacroError(f"token {token!r} is not in vocab.json")
    return _span("vocab", f"stoi.{token}", "", None, str(vocab["stoi"][token]))


def authored(x: Any) -> Markup:
    """A number the lesson states as its own arithmetic, not as a measurement."""
    return Markup(f'<span class="authored">{html.escape(str(x))}</span>')


def _inline_md(text: str) -> str:
    out = md_lib.markdown(str(text), extensions=["attr_list"])
    return re.sub(r"^<p>(.*)</p>$", r"\1", out.strip(), flags=re.S)


def _block_md(text: str) -> str:
    return md_lib.markdown(str(text), extensions=["attr_list", "tables", "md_in_html"])


def _table(header: list[str], rows: list[list[str]], align: list[str] | None = None, label: str = "") -> Markup:
    """A Markdown table (Material's look) inside a named, focusable region that scrolls on a phone."""
    align = align or ["---"] * len(header)
    lines = ["", "| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    table = "\n".join(lines) + "\n\n"
    if not label:
        return Markup(table)
    return Markup(f'\n\n<div class="mha-scroll" tabindex="0" role="region" aria-label="{html.escape(label)}" '
                  f'markdown>\n{table}</div>\n\n')


def _label(model: str) -> str:
    return html.escape(val(f"protocol.labels.{model}"))


def runs_table() -> Markup:
    """One row per training run: model, seed, chosen update, validation and test loss, perplexity."""
    rows = []
    for i, r in enumerate(val("runs")):
        p = f"runs.{i}"
        rows.append([_label(r["model"]), ev(f"{p}.seed"), ev(f"{p}.best_update", ","), ev(f"{p}.val_loss", ".3f"),
                     ev(f"{p}.test_loss", ".3f"), ev(f"{p}.test_perplexity", ".2f"),
                     ev(f"{p}.train_seconds", ",.0f")])
    return _table(["model", "seed", "chosen update", "validation loss", "test loss", "test perplexity",
                   "training time (s)"], rows, ["---", "---:", "---:", "---:", "---:", "---:", "---:"],
                  label="Every training run")


def aggregates_table() -> Markup:
    rows = []
    for model in val("aggregates"):
        p = f"aggregates.{model}"
        rows.append([_label(model), ev(f"{p}.runs"), ev(f"{p}.parameters", ","),
                     f'{ev(f"{p}.test_loss_mean", ".3f")} ± {ev(f"{p}.test_loss_sd", ".3f")}',
                     f'{ev(f"{p}.perplexity_mean", ".2f")} ± {ev(f"{p}.perplexity_sd", ".2f")}',
                     f'{ev(f"{p}.train_seconds_mean", ",.0f")} ± {ev(f"{p}.train_seconds_sd", ",.0f")}'])
    return _table(["model", "runs", "parameters", "test loss (mean ± sd)", "test perplexity (mean ± sd)",
                   "training time, s (mean ± sd)"], rows, ["---", "---:", "---:", "---:", "---:", "---:"],
                  label="Mean and spread per model")


def audit_table() -> Markup:
    rows = []
    for split in val("audit"):
        p = f"audit.{split}"
        rows.append([split, ev(f"{p}.stories", ","), ev(f"{p}.tokens", ","), ev(f"{p}.windows", ","),
                     ev(f"{p}.oov_tokens", ","), ev(f"{p}.oov_rate", ".2%")])
    return _table(["split", "stories", "ordinary tokens", "windows (examples)", "tokens mapped to UNK",
                   "UNK share"], rows, ["---", "---:", "---:", "---:", "---:", "---:"],
                  label="The three splits")


def story_is_cut(path: str) -> bool:
    """True when a story's text does not end a sentence (the source file cut it short)."""
    end = val(path)["text"].rstrip().rstrip('"\u201d\')')
    return not end.endswith((".", "!", "?"))


def story(path: str, head_words: int = 60, tail_words: int = 25) -> Markup:
    """A source story as a quotation with its row; longer ones keep the start and end around [...]."""
    rec = val(path)
    words = rec["text"].split()
    if len(words) > head_words + tail_words + 10:
        tail = " ".join(words[len(words) - tail_words:])
        text = html.escape(" ".join(words[:head_words])) + " […]" + (" " + html.escape(tail) if tail else "")
    else:
        text = html.escape(" ".join(words))
    cut = ('…</p><p class="mha-story__cut"><em>The story ends here, mid-sentence: the data file '
           'itself cuts it short, and the pipeline uses it as it is.</em>') if story_is_cut(path) else ""
    return Markup(f'<blockquote class="mha-story"><p>{text}{cut}</p>'
                  f'<p class="mha-story__source">Source row {ev(path + ".row")} · '
                  f'{ev(path + ".token_count", ",")} tokens, {ev(path + ".word_count", ",")} words · '
                  f'TinyStories (Eldan and Li), CDLA-Sharing-1.0</p></blockquote>')


def _cell(source: str, path: str, cls: str = "", fmt: str = "") -> str:
    value = lookup(DATA.get(source), path, source)
    c = f' class="{cls}"' if cls else ""
    return f"<td{c}>{_span(source, path, fmt, None, format_value(value, fmt))}</td>"


def _grid(caption: str, header: list[str] | None, body: list[str]) -> Markup:
    head = "<thead><tr>" + "".join(f'<th scope="col">{h}</th>' for h in header) + "</tr></thead>" if header else ""
    # A region that may scroll sideways is focusable and named, so keyboard users can scroll it too.
    label = html.escape(re.sub(r"<[^>]+>", "", caption), quote=True)
    return Markup(f'\n\n<div class="mha-scroll" tabindex="0" role="region" aria-label="{label}">'
                  f'<table class="mha-grid"><caption>{caption}</caption>'
                  f'{head}<tbody>{"".join(body)}</tbody></table></div>\n\n')


def toy_vocab_table() -> Markup:
    """The toy vocabulary: id and item, one column per id."""
    vocab = toy_val("vocab")
    ids = "".join(_cell("toy", f"vocab.{i}.id") for i in range(len(vocab)))
    items = "".join(_cell("toy", f"vocab.{i}.token") for i in range(len(vocab)))
    return _grid("The toy vocabulary: four special items, then the sentence's tokens in sorted order",
                 None, [f'<tr><th scope="row">id</th>{ids}</tr>', f'<tr><th scope="row">item</th>{items}</tr>'])


def toy_window_table(first: int = 0, last: int | None = None) -> Markup:
    """Toy windows: row, the w input slots (token and id), the target (token and id)."""
    rows = toy_val("rows")
    w = toy_val("w")
    body = []
    for i in range(first, len(rows) if last is None else last):
        r = rows[i]
        cells = [f'<th scope="row">{_span("toy", f"rows.{i}.row", "", None, str(r["row"]))}</th>']
        for k in range(w):
            pad = "is-pad" if r["context_ids"][k] == 0 else ""
            cells.append(f'<td class="{pad}">{_span("toy", f"rows.{i}.context_tokens.{k}", "", None, r["context_tokens"][k])}'
                         f'<br><small>id {_span("toy", f"rows.{i}.context_ids.{k}", "", None, str(r["context_ids"][k]))}</small></td>')
        cells.append(f'<td class="is-target">{_span("toy", f"rows.{i}.target_token", "", None, r["target_token"])}'
                     f'<br><small>id {_span("toy", f"rows.{i}.target_id", "", None, str(r["target_id"]))}</small></td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    header = ["row", *[f"slot {k}" for k in range(w)], "target y"]
    return _grid(f"Input windows x (token and id) and their targets, w = {w}", header, body)


def real_prefix_table() -> Markup:
    """The two Lily prefixes in the real vocabulary: PAD count, prefix ids, target id."""
    body = []
    for i, r in enumerate(toy_val("real.rows")):
        prefix = " ".join(f'{html.escape(t)}&nbsp;({_span("toy", f"real.rows.{i}.prefix_ids.{k}", "", None, str(pid))})'
                          for k, (t, pid) in enumerate(zip(r["prefix"], r["prefix_ids"])))
        body.append(f'<tr><th scope="row">{i}</th>'
                    f'<td>{_span("toy", f"real.rows.{i}.pads", "", None, str(r["pads"]))} × &lt;PAD&gt;&nbsp;(0)</td>'
                    f'<td style="text-align:left">{prefix}</td>'
                    f'<td class="is-target">{html.escape(r["target"])}&nbsp;'
                    f'({_span("toy", f"real.rows.{i}.target_id", "", None, str(r["target_id"]))})</td></tr>')
    return _grid("The same two prefixes in the real vocabulary", ["row", "left padding", "prefix (id)", "target y (id)"], body)




def _wt_slot_labels(b: int) -> list[str]:
    row = wt_val(f"rows.{b}")
    return [f"{s} {html.escape(t)}" for s, t in zip(wt_val("shown_slots"), row["slot_tokens"])]


def wt_matrix(path: str, caption: str, rows: str = "slots", cols: str = "coords", fmt: str = ".3f",
              b: int | None = None) -> Markup:
    """A 2-D slice of walkthrough.json as a table; ``rows``/``cols``: slots, heads or coords; null = masked."""
    data = wt_val(path)
    if b is None:
        m = re.match(r"rows\.(\d+)\.", path)
        b = int(m.group(1)) if m else 0

    def labels(kind: str, n: int) -> list[str]:
        if kind == "slots":
            return [f"slot {x}" for x in _wt_slot_labels(b)]
        if kind == "heads":
            return [f"head {i + 1}" for i in range(n)]
        return [f"c{i}" for i in range(n)]

    row_labels = labels(rows, len(data))
    col_labels = labels(cols, len(data[0]))
    body = []
    for i, line in enumerate(data):
        cells = [f'<th scope="row">{row_labels[i]}</th>']
        for j, v in enumerate(line):
            if v is None:
                cells.append('<td class="is-masked">—</td>')
            else:
                cells.append(f'<td>{_span("walkthrough", f"{path}.{i}.{j}", fmt, None, format_value(v, fmt))}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return _grid(caption, ["", *col_labels], body)


def wt_mask(b: int) -> Markup:
    """The mask picture for example ``b``: receivers (rows) by sources (columns) over the shown slots."""
    mask = wt_val(f"rows.{b}.mask")
    labels = _wt_slot_labels(b)
    body = []
    for i, line in enumerate(mask):
        cells = [f'<th scope="row">{labels[i]}</th>']
        for blocked in line:
            cells.append('<td class="is-masked">blocked</td>' if blocked else "<td>read</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return _grid("Which source (column) each receiver (row) may read", ["receiver / source", *labels], body)


def wt_final_weights(b: int) -> Markup:
    """Attention weights of the final receiver, per head, over the shown slots."""
    labels = _wt_slot_labels(b)
    A = wt_val(f"rows.{b}.A")
    mask = wt_val(f"rows.{b}.mask")
    last = len(labels) - 1
    body = []
    for h, head in enumerate(A):
        cells = [f'<th scope="row">head {h + 1}</th>']
        for j, v in enumerate(head[last]):
            cells.append('<td class="is-masked">—</td>' if mask[last][j] else
                         f'<td>{_span("walkthrough", f"rows.{b}.A.{h}.{last}.{j}", ".3f", None, format_value(v, ".3f"))}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return _grid("Weights of the final receiver's query (rows: heads; columns: source slots)", ["", *labels], body)


def top_table(path: str, caption: str, src: str = "walkthrough") -> Markup:
    """The most probable next tokens: rank, token, id and probability."""
    items = lookup(DATA.get(src), path, src)
    body = []
    for i, item in enumerate(items):
        body.append(f'<tr><th scope="row">{i + 1}</th>'
                    f'<td style="text-align:left">{_span(src, f"{path}.{i}.token", "", None, item["token"])}</td>'
                    f'<td>{_span(src, f"{path}.{i}.id", "", None, str(item["id"]))}</td>'
                    f'<td>{_span(src, f"{path}.{i}.p", ".4f", None, format_value(item["p"], ".4f"))}</td></tr>')
    return _grid(caption, ["rank", "token", "id", "probability"], body)


# One salt for the whole site; chosen (among the first few tried) so that the balance test passes.
QUIZ_SALT = "mha-quiz-42"


def quiz_order(question: str, n: int, order_seed: int = 0) -> list[int]:
    """The fixed shuffled order of a question's options: the same on every build and visit."""
    digest = hashlib.sha256(f"{QUIZ_SALT}|{order_seed}|{question}".encode()).hexdigest()
    order = list(range(n))
    random.Random(int(digest[:16], 16)).shuffle(order)
    return order


def _option(question: str, o: Any) -> tuple[str, str]:
    if not (isinstance(o, (list, tuple)) and len(o) == 2 and all(str(x).strip() for x in o)):
        raise MacroError(f"quiz {question!r}: each option must be [text, why] (one sentence saying why it is "
                         f"right or wrong); got {o!r}")
    return str(o[0]), str(o[1])


def quiz_html(question: str, options: list, correct: int, explanation: str, order_seed: int = 0,
              hint: str = "") -> str:
    if not 0 <= correct < len(options):
        raise MacroError(f"quiz {question!r}: correct={correct} but there are {len(options)} options")
    pairs = [_option(question, o) for o in options]
    order = quiz_order(question, len(pairs), order_seed)
    items = "".join(f'<li class="mha-quiz__option" data-correct="{"true" if i == correct else "false"}">'
                    f"{_inline_md(pairs[i][0])}</li>" for i in order)
    whys = "".join(f'<li class="mha-quiz__why" data-correct="{"true" if i == correct else "false"}">'
                   f"{_inline_md(pairs[i][1])}</li>" for i in order)
    letter = chr(65 + order.index(correct))
    answer = _inline_md(pairs[correct][0])
    body = _block_md(explanation)
    return (f'<div class="mha-quiz" data-mha-widget="quiz" role="group" aria-label="Check yourself">'
            f'<p class="mha-quiz__kicker">Check yourself</p>'
            f'<p class="mha-quiz__question">{_inline_md(question)}</p>'
            f'<ol class="mha-quiz__options" type="A">{items}</ol>'
            # The "not yet" hint after a first wrong try (quiz.js); without JavaScript it is simply shown.
            + (f'<p class="mha-quiz__hint"><strong>Hint:</strong> {_inline_md(hint)}</p>' if hint.strip() else "")
            + f'<details class="mha-quiz__explanation"><summary>Show the answer</summary>'
            f'<p class="mha-quiz__answer"><strong>Answer: {letter}.</strong> {answer}</p>{body}'
            f'<p class="mha-quiz__whys-title">Option by option:</p>'
            f'<ol class="mha-quiz__whys" type="A">{whys}</ol></details></div>')


def quiz(question: str, options: list, correct: int = 0, order_seed: int = 0, hint: str = "",
         caller=None) -> Markup:
    explanation = caller() if caller is not None else ""
    # Strip the common indentation Jinja keeps from the call block.
    lines = str(explanation).splitlines()
    indent = min((len(l) - len(l.lstrip()) for l in lines if l.strip()), default=0)
    explanation = "\n".join(l[indent:] for l in lines)
    return Markup("\n\n" + quiz_html(question, options, correct, explanation, order_seed, hint) + "\n\n")


def _res_cell(path: str, fmt: str = ",") -> str:
    return f"<td>{_span('results', path, fmt, None, format_value(res_val(path), fmt))}</td>"


def parameter_table() -> Markup:
    """Parameters per part and model, with each part's share of the model's total."""
    models = list(val("protocol.models"))
    body = []
    for part, label in res_val("part_labels").items():
        cells = [f'<th scope="row">{html.escape(label)}</th>']
        for m in models:
            p = f"parameters.{m}.parts.{part}"
            if has(p, "results"):
                cells.append(f"<td>{_span('results', p + '.count', ',', None, format_value(res_val(p + '.count'), ','))}"
                             f" <small>({_span('results', p + '.share', '.1%', None, format_value(res_val(p + '.share'), '.1%'))})</small></td>")
            else:
                cells.append('<td class="is-masked">none</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    body.append('<tr class="is-total"><th scope="row">total</th>'
                + "".join(_res_cell(f"parameters.{m}.total") for m in models) + "</tr>")
    return _grid("Parameters per part, biases included (share of the model's total in brackets)",
                 ["part", *[_label(m) for m in models]], body)


def attention_cost_table() -> Markup:
    """Multiply-adds of one attention layer as the window grows, per head and in total."""
    heads = res_val("attention_cost.heads")
    body = []
    for i, row in enumerate(res_val("attention_cost.rows")):
        p = f"attention_cost.rows.{i}"
        mark = ' class="is-model"' if i == res_val("attention_cost.model_row") else ""
        cells = [f'<th scope="row">{_span("results", p + ".window", "", None, str(row["window"]))}</th>']
        cells += [_res_cell(f"{p}.per_head.{m}") for m in heads]
        cells += [_res_cell(f"{p}.scores_and_messages_total"), _res_cell(f"{p}.projections"),
                  _res_cell(f"{p}.attention_share", ".0%")]
        body.append(f"<tr{mark}>" + "".join(cells) + "</tr>")
    header = ["window <i>w</i>", *[f"per head, {_label(m).lower()}" for m in heads],
              "all heads", "projections", "attention's share"]
    return _grid("Multiply-adds of one attention layer when every slot is a receiver: scores and "
                 "messages per head and over all heads, the four projections, and attention's share of "
                 "the two (bold: the lesson's window)", header, body)


# ---------------------------------------------------------------------------
# Page 5, "What each head does" (issue 15): evidence.heads, written by export/heads.py.

def _ko(name: str, key: str, fmt: str, fn: str | None = None) -> Markup:
    return ev(f"heads.knockout.{name}.{key}", fmt, fn)


def _kind(kind: str) -> str:
    return html.escape(val(f"heads.kinds.{kind}"))


WEAK_LEAN = 1.5  # a head whose strongest kind gets less than 1.5x the even share is described as spreading evenly


def compare_link(prompt: str, model: str, head: int) -> str:
    """The compare page, opened on ``prompt`` with ``model``'s inspector and head ``head``'s switch in focus."""
    from urllib.parse import urlencode

    query = urlencode({"prompt": prompt, "inspect": model, "head": head})
    return html.escape(f"../../compare/?{query}")


def knockout_table() -> Markup:
    """The four-head model's test perplexity with heads switched off (rows: all, without k, only k, none)."""
    rows = []
    for name, row in val("heads.knockout").items():
        off = [i + 1 for i, v in enumerate(row["mask"]) if not v]
        on = [i + 1 for i, v in enumerate(row["mask"]) if v]
        if not off:
            what = "all four heads"
        elif not on:
            what = "no head (attention left out)"
        elif len(off) == 1:
            what = f"without head {off[0]}"
        else:
            what = f"only head {on[0]}"
        change = "—" if not off else _ko(name, "perplexity_change", "+.1%")
        changed = "—" if not off else _ko(name, "top_token_changed", ".1%")
        rows.append([what, _ko(name, "test_perplexity", ".2f"), change, changed])
    return _table(["heads used", "test perplexity", "change", "top token changed"],
                  rows, ["---", "---:", "---:", "---:"])


def shipped_vs_trained() -> Markup:
    """Why the knock-out's full model and the runs table differ in the last digit: two different weight files.

    ``{{ shipped_vs_trained() }}`` right after the knock-out's all-heads perplexity: a parenthesis that names
    the runs table's figure (the trained float32 model) and the shipped copy's encoding."""
    onnx = val("onnx.four_heads")
    return Markup(f" (the table of runs gives {ev('onnx.four_heads.test_perplexity_torch', '.2f')} for the same seed: "
            f"that is the trained float32 model, while the shipped copy the browser runs stores "
            f"{html.escape(onnx['encoding'].split(',')[0].split(' (')[0])}, which moves perplexity by "
            f"{format_value(onnx['test_perplexity_shipped'] / onnx['test_perplexity_torch'] - 1, '+.2%')})")


def knockout_summary() -> Markup:
    """Which head the model leans on most and least, in words, from the knock-out numbers."""
    ko = val("heads.knockout")
    heads = len(ko["all"]["mask"])
    without = sorted(range(1, heads + 1), key=lambda h: ko[f"without_{h}"]["test_perplexity"])
    least, most = without[0], without[-1]
    best_alone = min(range(1, heads + 1), key=lambda h: ko[f"only_{h}"]["test_perplexity"])
    return Markup(
        f"With all four heads the shipped model's test perplexity is {_ko('all', 'test_perplexity', '.2f')}"
        f"{shipped_vs_trained()}. "
        f"The model leans most on **head {most}**: without it perplexity rises to "
        f"{_ko(f'without_{most}', 'test_perplexity', '.2f')} ({_ko(f'without_{most}', 'perplexity_change', '+.0%')}), "
        f"and its top next token changes in {_ko(f'without_{most}', 'top_token_changed', '.0%')} of the test windows. "
        f"Removing **head {least}** costs least ({_ko(f'without_{least}', 'perplexity_change', '+.0%')}), though "
        f"even that is not nothing. No single head carries the model: the best one kept alone, head {best_alone}, "
        f"still leaves perplexity at {_ko(f'only_{best_alone}', 'test_perplexity', '.2f')}, and with every head "
        f"switched off it is {_ko('none', 'test_perplexity', '.2f')}.")


def head_atlas_figure() -> Markup:
    """The atlas figure (``::figure:: head-atlas``) and, as its text alternative, the same numbers as a table."""
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
    # The figure itself is drawn by the figures hook (site_src/hooks/lesson_figures/results.py) from heads.json,
    # in the site's themed SVG; this macro adds its numbers as a table.
    return Markup('\n\n::figure:: head-atlas\n\n'
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
        options, correct, "\n".join(lines),
        hint="A head matters most where many windows lean on it for the clue that decides the top choice.")
        + "\n\n")


MACROS = {
    "ev": ev, "wt": wt, "toy": toy, "val": val, "wt_val": wt_val, "toy_val": toy_val, "has": has,
    "vocab_id": vocab_id, "authored": authored, "runs_table": runs_table, "aggregates_table": aggregates_table,
    "audit_table": audit_table, "story": story, "quiz": quiz, "toy_vocab_table": toy_vocab_table,
    "toy_window_table": toy_window_table, "real_prefix_table": real_prefix_table, "wt_matrix": wt_matrix,
    "wt_mask": wt_mask, "wt_final_weights": wt_final_weights, "top_table": top_table,
    "res": res, "res_val": res_val, "parameter_table": parameter_table,
    "attention_cost_table": attention_cost_table,
    "knockout_table": knockout_table, "knockout_summary": knockout_summary, "head_atlas_figure": head_atlas_figure,
    "head_descriptions": head_descriptions, "head_knockout_quiz": head_knockout_quiz,
    "shipped_vs_trained": shipped_vs_trained,
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
