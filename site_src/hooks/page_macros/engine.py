"""The macros' engine: the pipeline's files, lookup and formatting, the figure span, tables and grids."""

from __future__ import annotations

import html
import json
import math
import re
from typing import Any

import markdown as md_lib
from markupsafe import Markup

import export.artefacts as artefacts  # standard library only: the build reads files, never computes

# Each macro source is a file the pipeline wrote (or a part of page_data.json).
SOURCES = {
    "evidence": "evidence",
    "walkthrough": "walkthrough",
    "vocab": "vocab",
    "page_data": "page_data",
    "example": "example_search",  # example: page 1's sentence (export/lesson/example_search.py)
    "microgpt_heads": "microgpt_heads",
}  # the microgpt page: where its heads matter (export/microgpt/head_effect.py)
PAGE_DATA_PARTS = ("toy", "results")  # sources that are a part of page_data.json
TRANSFORMS = {"abs": abs, "neg": lambda x: -x, "exp": math.exp}


class MacroError(Exception):
    pass


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
                raise MacroError(
                    f"{source} path {path!r}: {'.'.join(done) or 'the root'} is a list of "
                    f"{len(cur)} items, {part!r} is not an index in it"
                ) from None
        elif isinstance(cur, dict):
            if part not in cur:
                keys = ", ".join(sorted(map(str, cur))[:20])
                raise MacroError(
                    f"{source} path {path!r}: {'.'.join(done) or 'the root'} has no key {part!r} (it has: {keys})"
                )
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
                    hint = {
                        "walkthrough": "run `python -m export walkthrough`",
                        "microgpt_heads": "run `python -m export microgpt_heads`",
                        "page_data": "run `python -m export pagedata`",
                    }.get(source, "run `make models` (python -m export all)")
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
ex = _figure("example")  # {{ ex("n_candidates", ",") }}: page 1's sentence search
ex_val = _value("example")
page_data_val = _value("page_data")
mh = _figure("microgpt_heads")  # {{ mh("loss.all_on", ".3f") }}
mh_val = _value("microgpt_heads")


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
    return Markup(
        f'\n\n<div class="mha-scroll" tabindex="0" role="region" aria-label="{html.escape(label)}" '
        f"markdown>\n{table}</div>\n\n"
    )


def _mean_sd(path: str, mean: str, sd: str, fmt: str) -> str:
    """A table cell "mean ± sd" of the two fields at ``path``, on one line: "40.28 ±" above "0.42"
    reads as two numbers."""
    return f"{ev(f'{path}.{mean}', fmt)}\u00a0±\u00a0{ev(f'{path}.{sd}', fmt)}"


def _label(model: str) -> str:
    return html.escape(val(f"protocol.labels.{model}"))


def _cell(source: str, path: str, cls: str = "", fmt: str = "") -> str:
    value = lookup(DATA.get(source), path, source)
    c = f' class="{cls}"' if cls else ""
    return f"<td{c}>{_span(source, path, fmt, None, format_value(value, fmt))}</td>"


def _grid(caption: str, header: list[str] | None, body: list[str]) -> Markup:
    head = "<thead><tr>" + "".join(f'<th scope="col">{h}</th>' for h in header) + "</tr></thead>" if header else ""
    # A region that may scroll sideways is focusable and named, so keyboard users can scroll it too.
    label = html.escape(re.sub(r"<[^>]+>", "", caption), quote=True)
    return Markup(
        f'\n\n<div class="mha-scroll" tabindex="0" role="region" aria-label="{label}">'
        f'<table class="mha-grid"><caption>{caption}</caption>'
        f"{head}<tbody>{''.join(body)}</tbody></table></div>\n\n"
    )
