"""MkDocs hook: the lesson's diagrams, drawn as inline SVG at build time from the pipeline's numbers.

IN A PAGE, a line of its own

    ::figure:: fisherman-queries

becomes ``<figure class="mha-fig" id="fig-fisherman-queries">`` holding an
SVG (``role="img"``, or ``group`` when it holds links) with a ``<title>`` and a
``<desc>`` that a screen reader reads, numbers included, and a ``<figcaption>``
saying what to look at.
``FIGURES`` lists the names. Every number drawn comes from a file or from the
project's own code at build time, never from typing:

* ``wasm_assets/worksheet.json`` (page 2's two-head worksheet),
* ``wasm_assets/walkthrough.json`` and ``evidence.json`` (shapes, traces, parameter counts),
* the shipped one-head and four-head ONNX models, run with onnxruntime on page 1's coat prefix,
* ``export.multihead.MultiHeadAttentionLM.forward_full`` for the mask picture, and the
  models of ``export.models.build_model`` for the parameter groups,
* ``wasm_assets/subwords.json`` for page 3's tokenizers (written by ``export.lesson.subwords``;
  the build never trains).

The drawing code is the package ``lesson_figures`` next to this file (one module per
part of the lesson). Colours come from CSS (``site_src/css/figures.css``): classes such as ``h0``..``h3``
give head 1..4 the site's head colours in light and dark mode, and text uses
``currentColor``, so the figures follow the page's colour scheme.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError

_HOOKS = str(Path(__file__).resolve().parent)  # the lesson_figures package sits next to this hook
if _HOOKS not in sys.path:
    sys.path.append(_HOOKS)
from lesson_figures import growth, toy
from lesson_figures import attention, head_sweep, model, results, tokens
from lesson_figures.common import FigureError
from lesson_figures.tokens import subwords_result  # noqa: F401  (tests call it through this hook)

DIRECTIVE = re.compile(r"^::figure::[ \t]+(?P<name>[\w-]+)[ \t]*$", re.M)

FIGURES = {
    "coat-query": attention.figure_coat_query,
    "coat-heads": attention.figure_coat_heads,
    "fisherman-queries": attention.figure_fisherman_queries,
    "operation-flow": attention.figure_operation_flow,
    "model-map": model.figure_model_map,
    "mask": model.figure_mask,
    "tokenizers": tokens.figure_tokenizers,
    "traces-zoom": results.figure_traces_zoom,
    "parameters": results.figure_parameters,
    "toy-summary": toy.figure_toy_summary,
    "toy-accuracy": toy.figure_toy_accuracy,
    "toy-curves": toy.figure_toy_curves,
    "toy-attention": toy.figure_toy_attention,
    "head-growth": growth.figure_head_growth,
    "head-sweep": head_sweep.figure_head_sweep,
    "traces": results.figure_traces,
    "head-atlas": results.figure_head_atlas,
}

# Figures that a widget updates get a live line under the picture (page 2: the head explorer).
STATUS = {"operation-flow": '<p class="mha-fig__status" aria-live="polite"></p>'}


def _caption_html(markdown_text: str) -> str:
    import markdown

    out = markdown.markdown(markdown_text)
    return out.removeprefix("<p>").removesuffix("</p>")


def render(name: str) -> str:
    if name not in FIGURES:
        raise FigureError(f"unknown figure '{name}'; known: {', '.join(sorted(FIGURES))}")
    body, caption = FIGURES[name]()
    return (
        f'\n<figure class="mha-fig" id="fig-{name}" data-fig="{name}">'
        # focusable: on a phone a figure too wide for its text to stay readable scrolls sideways
        f'<div class="mha-fig__scroll" tabindex="0">{body}</div>{STATUS.get(name, "")}'
        f"<figcaption>{_caption_html(caption)}</figcaption></figure>\n"
    )


def on_page_markdown(markdown: str, page, config, files) -> str:
    if "::figure::" not in markdown:
        return markdown

    def one(m: re.Match) -> str:
        try:
            return render(m.group("name"))
        except FigureError as exc:
            raise PluginError(f"{page.file.src_uri}: figure {m.group('name')}: {exc}") from None

    return DIRECTIVE.sub(one, markdown)
