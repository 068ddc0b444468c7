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
* ``export.multihead.MultiHeadAttentionLM.forward_full`` for the mask picture and the
  parameter groups of ``export.models.build_model``,
* ``export.lesson.subwords`` for page 3's tokenizers (trained now when the stories
  are on disk, else read from ``wasm_assets/subwords.json``).

Colours come from CSS (``site_src/css/figures.css``): classes such as ``h0``..``h3``
give head 1..4 the site's head colours in light and dark mode, and text uses
``currentColor``, so the figures follow the page's colour scheme.
"""
from __future__ import annotations

import html
import json
import logging
import math
import os
import re
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError

log = logging.getLogger("mkdocs.hooks.figures")

ROOT = Path(__file__).resolve().parents[2]
WASM_ASSETS = Path(os.environ.get("MHA_WASM_ASSETS") or ROOT / "wasm_assets")
DIRECTIVE = re.compile(r"^::figure::[ \t]+(?P<name>[\w-]+)[ \t]*$", re.M)
COAT_PREFIX = "She wore a red wool hooded coat"  # page 1's opening example
FONT = 13  # SVG units; figures are about 400 units wide so they stay readable on a 390 px phone


class FigureError(Exception):
    pass


def _json(name: str) -> dict:
    path = WASM_ASSETS / name
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FigureError(f"{path} is missing; run the pipeline step that writes it (see README)") from None
    except json.JSONDecodeError as exc:
        raise FigureError(f"{path} is not valid JSON ({exc}); rerun the pipeline step that writes it") from None


def _project():
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


# ---------------------------------------------------------------------------
# SVG helpers. Every helper returns a string; coordinates are SVG units.

def esc(text) -> str:
    return html.escape(str(text), quote=True)


def text(x, y, s, cls="", anchor="start", size=None, weight=None) -> str:
    attrs = f'x="{x:g}" y="{y:g}"'
    if anchor != "start":
        attrs += f' text-anchor="{anchor}"'
    if size:
        attrs += f' font-size="{size:g}"'
    if weight:
        attrs += f' font-weight="{weight}"'
    if cls:
        attrs += f' class="{cls}"'
    return f"<text {attrs}>{esc(s)}</text>"


def rect(x, y, w, h, cls="", rx=0, extra="") -> str:
    r = f' rx="{rx:g}"' if rx else ""
    c = f' class="{cls}"' if cls else ""
    return f'<rect x="{x:g}" y="{y:g}" width="{max(w, 0):g}" height="{max(h, 0):g}"{r}{c}{extra}/>'


def line(x1, y1, x2, y2, cls="mha-fig__wire") -> str:
    return f'<line x1="{x1:g}" y1="{y1:g}" x2="{x2:g}" y2="{y2:g}" class="{cls}"/>'


def path(d, cls="mha-fig__wire") -> str:
    return f'<path d="{d}" class="{cls}"/>'


def arrow(x1, y1, x2, y2, cls="mha-fig__wire") -> str:
    return f'<line x1="{x1:g}" y1="{y1:g}" x2="{x2:g}" y2="{y2:g}" class="{cls}" marker-end="url(#mha-arrow)"/>'


ARROW_DEF = ('<defs><marker id="mha-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
             'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="mha-fig__arrowhead"/>'
             '</marker><pattern id="mha-hatch" width="5" height="5" patternUnits="userSpaceOnUse" '
             'patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="5" class="mha-fig__hatch"/></pattern></defs>')


def box(x, y, w, h, lines, cls="", learned=False, href=None, box_id=None, label=None) -> str:
    """A labelled box; ``lines`` are (text, css class) pairs drawn centred, first line bold."""
    kind = "mha-fig__box mha-fig__box--learned" if learned else "mha-fig__box"
    parts = [rect(x, y, w, h, f"{kind} {cls}".strip(), rx=5)]
    n = len(lines)
    step = FONT + 2
    top = y + h / 2 - (n - 1) * step / 2 + FONT * 0.35
    for i, (s, c) in enumerate(lines):
        parts.append(text(x + w / 2, top + i * step, s, c, anchor="middle",
                          weight="700" if i == 0 else None, size=FONT if i == 0 else FONT - 1.5))
    inner = "".join(parts)
    gid = f' id="{box_id}"' if box_id else ""
    if href:
        aria = esc(label or " ".join(s for s, _ in lines))
        return f'<a xlink:href="{esc(href)}" class="mha-fig__link"{gid} aria-label="{aria}"><g>{inner}</g></a>'
    return f"<g{gid}>{inner}</g>"


def svg(name: str, width: float, height: float, title: str, desc: str, body: str, links: bool = False) -> str:
    """The SVG element. ``role="img"`` hides an image's inside from assistive technology, so a figure whose
    boxes are links is a ``group`` instead (named and described the same way), and its links stay reachable."""
    role = "group" if links else "img"
    scale = 1.35  # CSS pixels per unit on a wide screen (text about the size of the page's); phones shrink it
    return (f'<svg class="mha-fig__svg" viewBox="0 0 {width:g} {height:g}" width="{width * scale:.0f}" '
            f'height="{height * scale:.0f}" '
            f'xmlns:xlink="http://www.w3.org/1999/xlink" role="{role}" '
            f'aria-labelledby="fig-{name}-title fig-{name}-desc" font-size="{FONT}">'
            f'<title id="fig-{name}-title">{esc(title)}</title><desc id="fig-{name}-desc">{esc(desc)}</desc>'
            f"{ARROW_DEF}{body}</svg>")


def shape(dims) -> str:
    return "[" + ", ".join(f"{d:,}" if isinstance(d, int) else str(d) for d in dims) + "]"


def display(token: str) -> str:
    """Special tokens without their angle brackets (they read as HTML tags in captions)."""
    return token[1:-1] if token.startswith("<") and token.endswith(">") else token


def pct(x: float) -> str:
    return f"{x:.2f}"


# ---------------------------------------------------------------------------
# Weight bars: one row per source token, one column per head.

def weight_bars(name: str, title: str, tokens: list[str], weights: list[list[float]], receiver: int,
                head_labels: list[str], head_classes: list[str], note_rows: dict[int, str] | None = None) -> str:
    """``weights[h][j]``: head h's weight on source j; the receiver's row is marked."""
    heads = len(weights)
    label_w = 100
    col_w = min(120, (380 - label_w) / heads)  # narrow figures stay large on a phone
    row_h = 24
    top = 34
    width = label_w + col_w * heads + 4
    height = top + row_h * len(tokens) + 8
    parts = []
    for h in range(heads):
        x0 = label_w + h * col_w
        parts.append(text(x0 + 4, 18, head_labels[h], f"mha-fig__head-label {head_classes[h]}-text", weight="700"))
        parts.append(line(x0, 26, x0, height - 6, "mha-fig__axis"))
    best = [max(range(len(tokens)), key=lambda j: w[j]) for w in weights]
    for j, tok in enumerate(tokens):
        y = top + j * row_h
        shown = display(tok) + (" ▸" if j == receiver else "")
        if note_rows and j in note_rows:
            shown = f"{display(tok)} {note_rows[j]}"
        parts.append(text(label_w - 6, y + row_h * 0.65, shown, "mha-fig__label", anchor="end",
                          weight="700" if j == receiver else None, size=FONT - 1))
        for h in range(heads):
            x0 = label_w + h * col_w
            w = weights[h][j]
            bar_w = (col_w - 42) * w
            parts.append(rect(x0, y + 4, bar_w, row_h - 8, f"mha-fig__bar {head_classes[h]}"))
            parts.append(text(x0 + bar_w + 3, y + row_h * 0.68, pct(w), "mha-fig__value",
                              weight="700" if j == best[h] else None, size=FONT - 2))
    desc = f"Receiver: {display(tokens[receiver])} (marked ▸). " + "; ".join(
        f"{head_labels[h]}: " + ", ".join(f"{display(t)} {pct(weights[h][j])}" for j, t in enumerate(tokens))
        + f" (largest on {display(tokens[best[h]])})" for h in range(heads))
    return svg(name, width, height, title, desc, "".join(parts))


def figure_coat_query() -> tuple[str, str]:
    tokens, weights, unknown = _coat_attention("one_head")
    body = weight_bars("coat-query", "One query at “coat”: the one-head model's weights over the coat prefix",
                       tokens, weights, len(tokens) - 1, ["the one head"], ["h0"],
                       note_rows={j: "(UNK)" for j in unknown})
    cap = ("**One query, one set of weights.** The trained one-head model (seed 11, the model the "
           "comparison page runs) reads *she wore a red wool hooded coat*; the bars are the weights of its "
           "single query at the receiver *coat* (the last token, marked ▸) over every source, adding up to 1. "
           "Whatever this head takes from *red* it must take with that one weight for every coordinate of "
           "its message." + _unknown_note(tokens, unknown))
    return body, cap


def figure_coat_heads() -> tuple[str, str]:
    tokens, weights, unknown = _coat_attention("four_heads")
    body = weight_bars("coat-heads", "Four queries at “coat”: the four-head model's weights, one column per head",
                       tokens, weights, len(tokens) - 1, [f"head {h + 1}" for h in range(len(weights))],
                       [f"h{h}" for h in range(len(weights))], note_rows={j: "(UNK)" for j in unknown})
    cap = ("**Same receiver, four queries.** The trained four-head model on the same prefix: each head has "
           "its own query at *coat* and its own weights (each column adds up to 1). Compare where each "
           "column puts its largest weight. Nobody told the heads to differ; training made them so.")
    return body, cap


def _unknown_note(tokens, unknown) -> str:
    if not unknown:
        return ""
    names = " and ".join(f"*{tokens[j]}*" for j in unknown)
    return (f" The model's vocabulary has no {names}, so it reads {'them' if len(unknown) > 1 else 'it'} "
            "as the unknown token UNK (page 3 explains why).")



def _coat_attention(model: str):
    """Final-query attention of a shipped ONNX model over BOS + the coat prefix."""
    _project()
    import numpy as np
    import onnxruntime as ort

    from export.generate import prompt_history
    from export.windows import context_window
    from export.wordlm import UNK_ID, tokenize

    vocab = _json("vocab.json")
    itos, T = vocab["itos"], vocab["T"]
    history = prompt_history(itos, COAT_PREFIX)
    words = ["<BOS>", *tokenize(COAT_PREFIX)]
    onnx = WASM_ASSETS / "models" / f"{model}.onnx"
    if not onnx.is_file():
        raise FigureError(f"{onnx} is missing; run `python -m export onnx`")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    session = ort.InferenceSession(str(onnx), opts, providers=["CPUExecutionProvider"])
    window = np.asarray([context_window(history, T)], dtype=np.int64)
    _, attention = session.run(None, {"ids": window})  # [1, heads, T]
    n = len(history)
    weights = [[float(w) for w in head[-n:]] for head in attention[0]]
    unknown = [j for j, i in enumerate(history) if i == UNK_ID]
    return words, weights, unknown


def figure_fisherman_queries() -> tuple[str, str]:
    ws = _json("worksheet.json")
    tokens, A = ws["tokens"], ws["A"]
    r = len(tokens) - 1
    weights = [A[h][r] for h in range(ws["heads"])]
    body = weight_bars("fisherman-queries", "Two queries at the final “the”: the worksheet's two heads",
                       tokens, weights, r, [f"head {h + 1}" for h in range(ws["heads"])],
                       [f"h{h}" for h in range(ws["heads"])])
    best = [tokens[max(range(len(tokens)), key=lambda j: w[j])] for w in weights]
    cap = (f"**Same receiver, two queries.** At the final *the* (slot {r + 1}) each head of page 2's "
           "worksheet has its own query and so its own weights over the ten known tokens. "
           f"Head 1's largest weight is on *{best[0]}*, head 2's on *{best[1]}*. "
           "These are seeded teaching numbers chosen to show the two readings (page 2 says how), "
           "not a trained model.")
    return body, cap


# ---------------------------------------------------------------------------
# Page 2: the whole operation as a flow.

def figure_operation_flow() -> tuple[str, str]:
    ws = _json("worksheet.json")
    T, D, H, dh = len(ws["tokens"]), ws["d_model"], ws["heads"], ws["head_dim"]
    W = 400
    parts = []
    lane_w = (W - 60) / H
    cx = W / 2 + 10
    # E
    parts.append(box(cx - 110, 8, 220, 44, [(f"E  {shape([T, D])}", ""), ("token rows + position rows", "")],
                     learned=False))
    y_lane = 112
    box_h = 40
    gap = 18
    stages = [
        ("Q, K, V", lambda: shape([T, dh]) + " each", True),
        ("scores", lambda: f"Q Kᵀ / √{dh}  " + shape([T, T]), False),
        ("mask", lambda: "later sources → −∞", False),
        ("A = softmax", lambda: shape([T, T]) + ", rows sum to 1", False),
        ("H = A V", lambda: shape([T, dh]), False),
    ]
    lane_bottom = y_lane + len(stages) * (box_h + gap) - gap
    for h in range(H):
        x = 40 + h * lane_w + 6
        w = lane_w - 12
        g = [f'<g class="mha-lane" data-head="{h}">']
        g.append(rect(x - 4, y_lane - 24, w + 8, lane_bottom - y_lane + 30, f"mha-lane__bg h{h}-soft", rx=8))
        g.append(text(x + w / 2, y_lane - 8, f"head {h + 1}", f"h{h}-text", anchor="middle", weight="700"))
        for k, (title, sub, learned) in enumerate(stages):
            y = y_lane + k * (box_h + gap)
            g.append(box(x, y, w, box_h, [(title, ""), (sub(), "")], cls=f"h{h}-edge", learned=learned))
            if k:
                g.append(arrow(x + w / 2, y - gap, x + w / 2, y - 2))
        # the value route skips the scores: dashed, along the lane's outer edge
        vx = x + (w - 10 if h == H - 1 else 10)
        g.append(path(f"M{vx:g},{y_lane + box_h:g} L{vx:g},{y_lane + 4 * (box_h + gap) - 2:g}",
                      "mha-fig__wire mha-fig__wire--value"))
        g.append(text(vx + (-4 if h == H - 1 else 4), y_lane + 4 * (box_h + gap) - 8, "V", "mha-fig__small",
                      anchor="end" if h == H - 1 else "start", size=FONT - 3))
        g.append("</g>")
        parts.append("".join(g))
        # E feeds every head: same input
        parts.append(arrow(cx, 52, x + w / 2, y_lane - 26))
    parts.append(text(cx, 74, "both heads read the same E", "mha-fig__small mha-fig__halo", anchor="middle",
                      size=FONT - 1, weight="700"))
    y = lane_bottom + 22
    parts.append(box(cx - 130, y, 260, 40, [(f"concatenate [H₁ | H₂]  {shape([T, H * dh])}", ""),
                                             ("head 1 columns, then head 2 columns", "")]))
    for h in range(H):
        x = 40 + h * lane_w + lane_w / 2
        parts.append(arrow(x, lane_bottom + 2, cx + (h - (H - 1) / 2) * 60, y - 2))
    y2 = y + 58
    parts.append(arrow(cx, y + 40, cx, y2 - 2))
    parts.append(box(cx - 130, y2, 260, 40, [(f"× W_O {shape([D, D])} → update", ""),
                                              (f"{shape([T, D])}: mixes both heads", "")], learned=True))
    y3 = y2 + 58
    parts.append(arrow(cx, y2 + 40, cx, y3 - 2))
    parts.append(box(cx - 130, y3, 260, 40, [(f"output = E + update  {shape([T, D])}", ""),
                                              ("the residual: the block adds a change", "")]))
    # the residual route from E down the left margin
    parts.append(path(f"M{cx - 110:g},30 L14,30 L14,{y3 + 20:g} L{cx - 132:g},{y3 + 20:g}",
                      "mha-fig__wire mha-fig__wire--residual"))
    parts.append(f'<text x="10" y="{(30 + y3) / 2:g}" class="mha-fig__small" font-size="{FONT - 2}" '
                 f'transform="rotate(-90 10 {(30 + y3) / 2:g})" text-anchor="middle" dy="-2">residual: E</text>')
    height = y3 + 50
    desc = (f"E, {T} rows of width {D}, feeds both heads. In each head: its own projections give Q, K and V "
            f"of shape {T} by {dh}; scores Q K transposed over the square root of {dh}, {T} by {T}; the mask "
            f"hides later sources; softmax gives the weights A; H = A V, {T} by {dh}, with V taking a route "
            f"that skips the scores. The two H are concatenated to {T} by {H * dh}, multiplied by W_O "
            f"({D} by {D}) to an update of {T} by {D}, and added to E (the residual) to give the output.")
    body = svg("operation-flow", W, height, "The complete two-head operation, with the worksheet's shapes", desc,
               "".join(parts))
    cap = ("**The whole operation in one picture.** Follow E down both lanes: the two heads read the *same* "
           "E with their own matrices, score, mask, weigh and mix their values (the dashed V route does not "
           "pass through the scores), and only then are their messages joined and mixed by W_O. Boxes with a "
           "thick border hold learned numbers. The lane of the head you pick in the explorer below is "
           "highlighted.")
    return body, cap


# ---------------------------------------------------------------------------
# Page 4: the map of the trained model, and the mask.

STAGES = {  # map box -> the page-4 section that walks through it
    "tokens": "stage-token-rows", "positions": "stage-position-rows", "E": "stage-position-rows",
    "qkv": "stage-qkv", "scores": "stage-scores", "mask": "stage-mask", "A": "stage-weights",
    "AV": "stage-messages", "concat": "stage-concat", "wo": "stage-concat", "residual": "stage-concat",
    "hidden": "stage-prediction", "vocab": "stage-prediction", "loss": "stage-loss", "generate": "generation",
}


def _trained_config() -> dict:
    ev = _json("evidence.json")
    p = ev["protocol"]
    return {"C": ev["vocabulary"]["C"], "T": ev["vocabulary"]["T"], "D": p["d_model"], "hidden": p["hidden"],
            "heads": p["heads"]["four_heads"]}


def figure_model_map() -> tuple[str, str]:
    c = _trained_config()
    C, T, D, Hd, H = c["C"], c["T"], c["D"], c["hidden"], c["heads"]
    dh = D // H
    W = 400
    cx = W / 2 + 8
    parts = []

    def link(key):
        return f"#{STAGES[key]}"

    def b(key, x, y, w, h, lines, learned=False):
        label = " ".join(s for s, _ in lines) + " (go to this stage)"
        return box(x, y, w, h, lines, learned=learned, href=link(key), box_id=f"map-{key}", label=label)

    parts.append(text(cx, 14, f"X: token IDs {shape(['B', T])}", "mha-fig__label", anchor="middle", weight="700"))
    parts.append(arrow(cx - 60, 20, cx - 60, 34))
    parts.append(b("tokens", 30, 36, 175, 44, [("token embedding", ""), (f"table {shape([C, D])}", "")], True))
    parts.append(b("positions", 215, 36, 175, 44, [("position embedding", ""), (f"table {shape([T, D])}", "")],
                   True))
    parts.append(arrow(117, 80, cx - 20, 100))
    parts.append(arrow(302, 80, cx + 20, 100))
    parts.append(b("E", cx - 120, 102, 240, 40, [(f"E = sum  {shape(['B', T, D])}", ""),
                                                 ("token row + position row", "")]))
    parts.append(arrow(cx, 142, cx, 158))
    parts.append(b("qkv", cx - 150, 160, 300, 44, [(f"W_Q, W_K, W_V  {shape([D, D])} each", ""),
                                                   (f"split: Q, K, V {shape(['B', H, T, dh])}", "")], True))
    lane_top = 232
    lane_w = (W - 44) / H
    lane_boxes = [("scores", "scores", shape(["B", T, T])), ("mask", "mask", "−∞ if hidden"),
                  ("A", "softmax A", shape(["B", T, T])), ("AV", "A V", shape(["B", T, dh]))]
    bh, gap = 38, 14
    for h in range(H):
        x = 36 + h * lane_w + 3
        w = lane_w - 6
        g = [f'<g class="mha-lane" data-head="{h}">']
        bottom = lane_top + len(lane_boxes) * (bh + gap) - gap
        g.append(rect(x - 2, lane_top - 20, w + 4, bottom - lane_top + 24, f"mha-lane__bg h{h}-soft", rx=6))
        g.append(text(x + w / 2, lane_top - 6, f"head {h + 1}", f"h{h}-text", anchor="middle", weight="700",
                      size=FONT - 1))
        for k, (key, title, sub) in enumerate(lane_boxes):
            y = lane_top + k * (bh + gap)
            inner = box(x, y, w, bh, [(title, ""), (sub, "mha-fig__shape")], cls=f"h{h}-edge")
            anchor = f' id="map-{key}"' if h == 0 else ""  # the stages link back to head 1's box
            g.append(f'<a xlink:href="{link(key)}" class="mha-fig__link" aria-label="head {h + 1}: {esc(title)} '
                     f'(go to this stage)"{anchor}>{inner}</a>')
            if k:
                g.append(arrow(x + w / 2, y - gap, x + w / 2, y - 1))
        vx = x + w - 6
        g.append(path(f"M{vx:g},{lane_top - 10:g} L{vx:g},{lane_top + 3 * (bh + gap) - 1:g}",
                      "mha-fig__wire mha-fig__wire--value"))
        g.append("</g>")
        parts.append("".join(g))
        parts.append(arrow(cx + (h - (H - 1) / 2) * 40, 204, x + w / 2, lane_top - 21))
    bottom = lane_top + len(lane_boxes) * (bh + gap) - gap
    y = bottom + 24
    for h in range(H):
        x = 36 + h * lane_w + lane_w / 2
        parts.append(arrow(x, bottom + 2, cx + (h - (H - 1) / 2) * 40, y - 1))
    parts.append(b("concat", cx - 150, y, 300, 36, [(f"concatenate the {H} messages {shape(['B', T, D])}", "")]))
    y += 52
    parts.append(arrow(cx, y - 16, cx, y - 1))
    parts.append(b("wo", cx - 150, y, 300, 36, [(f"W_O {shape([D, D])} → update {shape(['B', T, D])}", "")], True))
    y += 52
    parts.append(arrow(cx, y - 16, cx, y - 1))
    parts.append(b("residual", cx - 150, y, 300, 36, [(f"E + update {shape(['B', T, D])}", "")]))
    res_y = y + 18
    parts.append(path(f"M{cx - 120:g},122 L12,122 L12,{res_y:g} L{cx - 152:g},{res_y:g}",
                      "mha-fig__wire mha-fig__wire--residual"))
    parts.append(f'<text x="8" y="{(122 + res_y) / 2:g}" class="mha-fig__small" font-size="{FONT - 2}" '
                 f'transform="rotate(-90 8 {(122 + res_y) / 2:g})" text-anchor="middle" dy="-2">residual: E</text>')
    y += 52
    parts.append(arrow(cx, y - 16, cx, y - 1))
    parts.append(b("hidden", cx - 150, y, 300, 40, [(f"final slot {shape(['B', D])} → ReLU layer", ""),
                                                    (f"weights {shape([D, Hd])} → {shape(['B', Hd])}", "")], True))
    y += 56
    parts.append(arrow(cx, y - 16, cx, y - 1))
    parts.append(b("vocab", cx - 150, y, 300, 40, [("vocabulary head → logits", ""),
                                                   (f"weights {shape([Hd, C])} → {shape(['B', C])}", "")], True))
    y += 58
    parts.append(arrow(cx - 40, y - 18, cx - 95, y - 1))
    parts.append(arrow(cx + 40, y - 18, cx + 95, y - 1))
    parts.append(b("loss", 20, y, 180, 40, [("training: loss", ""), (f"cross-entropy with y {shape(['B'])}", "")]))
    parts.append(b("generate", 210, y, 180, 40, [("generation", ""), ("pick a token, append, repeat", "")]))
    height = y + 48
    desc = (f"X, token IDs of shape B by {T}, looks up the token embedding table ({C} by {D}); the position table "
            f"({T} by {D}) is added, giving E of shape B by {T} by {D}. W_Q, W_K and W_V ({D} by {D}) give Q, K, V "
            f"split into {H} heads of width {dh}. Each of the {H} head lanes computes scores (B by {T} by {T}), "
            f"applies the mask, takes the softmax A and the messages A V (B by {T} by {dh}); V reaches A V without "
            f"passing through the scores. The messages are concatenated (B by {T} by {D}), W_O makes the update, "
            f"and the residual adds E. The final slot (B by {D}) goes through a ReLU layer of {Hd} units and the "
            f"vocabulary head to logits (B by {C}), which feed the loss in training and the choice of the next "
            "token in generation. Each box links to the stage of the walkthrough below.")
    body = svg("model-map", W, height, "Map of the trained four-head model with tensor shapes", desc,
               "".join(parts), links=True)
    cap = (f"**Where am I in the model?** The trained four-head model with its shapes (B examples, {T} slots, "
           f"width {D}, {H} heads of {dh}). Thick borders: learned parameters. Dashed: the value route into "
           "A V and the residual route from E. Every box is a link to its stage of the walkthrough below, and "
           "each stage links back here.")
    return body, cap


def figure_mask() -> tuple[str, str]:
    """The mask of the walkthrough's first example, as the model's own forward_full computes it."""
    _project()
    import torch

    from export.multihead import MultiHeadAttentionLM
    from export.windows import context_window

    wt = _json("walkthrough.json")
    vocab = _json("vocab.json")
    stoi = {t: i for i, t in enumerate(vocab["itos"])}
    cfg = wt["config"]
    prefix = wt["rows"][0]["prefix"]
    T = cfg["T"]
    x = torch.tensor([context_window([stoi[t] for t in prefix], T)])
    torch.manual_seed(0)  # the mask does not depend on the weights; a small model keeps this fast
    model = MultiHeadAttentionLM(cfg["C"], T, d_model=cfg["heads"] * 2, hidden=4, heads=cfg["heads"])
    with torch.no_grad():
        mask = model.forward_full(x)["mask"][0].tolist()  # True = blocked
    real = [i != 0 for i in x[0].tolist()]
    cell = 3.5
    ox, oy = 44, 30
    parts = [text(ox, 16, f"all {T} × {T} (receiver rows, source columns)", "mha-fig__small", size=FONT - 2)]

    def kind(i, j):
        if not mask[i][j]:
            return "mha-mask--open"
        return "mha-mask--future" if j > i else "mha-mask--pad"

    for i in range(T):  # one rectangle per run of equal cells keeps the SVG small
        j = 0
        while j < T:
            k = j
            while k + 1 < T and kind(i, k + 1) == kind(i, j):
                k += 1
            parts.append(rect(ox + j * cell, oy + i * cell, (k - j + 1) * cell, cell, kind(i, j),
                              extra=' shape-rendering="crispEdges"'))
            j = k + 1
    parts.append(rect(ox, oy, T * cell, T * cell, "mha-fig__frame"))
    parts.append(text(ox - 4, oy + 10, "0", "mha-fig__small", anchor="end", size=FONT - 3))
    parts.append(text(ox - 4, oy + T * cell, str(T - 1), "mha-fig__small", anchor="end", size=FONT - 3))
    parts.append(text(ox, oy + T * cell + 14, "source slot →", "mha-fig__small", size=FONT - 3))
    # zoom: the last slots, with their tokens
    n = len(wt["shown_slots"])
    zs = 30
    ly = oy + T * cell + 30  # legend under the full picture, the zoom under the legend
    zx, zy = ox + 40, ly + 3 * 18 + 56
    slots = wt["shown_slots"]
    labels = [("PAD" if not real[s] else display(vocab["itos"][x[0, s].item()])) for s in slots]
    parts.append(text(ox, zy - 40, f"zoom: slots {slots[0]}–{slots[-1]}", "mha-fig__small", size=FONT - 2))
    for a, s in enumerate(slots):
        parts.append(text(zx - 4, zy + a * zs + zs * 0.62, labels[a], "mha-fig__label", anchor="end",
                          size=FONT - 2))
        parts.append(f'<text transform="translate({zx + a * zs + zs * 0.6:g},{zy - 4:g}) rotate(-50)" '
                     f'class="mha-fig__label" font-size="{FONT - 2}">{esc(labels[a])}</text>')
        for b_, t in enumerate(slots):
            k = kind(s, t)
            parts.append(rect(zx + b_ * zs, zy + a * zs, zs, zs, f"{k} mha-mask__zoom"))
            mark = "✓" if k == "mha-mask--open" else "×"
            parts.append(text(zx + b_ * zs + zs / 2, zy + a * zs + zs * 0.66, mark, f"mha-mask__mark {k}-mark",
                              anchor="middle", size=FONT))
    for k, (cls, label) in enumerate((("mha-mask--open", "may read (weight can be > 0)"),
                                      ("mha-mask--future", "later slot: blocked"),
                                      ("mha-mask--pad", "PAD source of a real token: blocked"))):
        parts.append(rect(ox, ly + k * 18, 12, 12, cls))
        parts.append(text(ox + 18, ly + k * 18 + 10, label, "mha-fig__small", size=FONT - 2))
    width = ox + T * cell + 12
    height = zy + n * zs + 6
    open_rows = {slots[a]: [labels[b] for b, t in enumerate(slots) if not mask[s][t]] for a, s in enumerate(slots)}
    words = " ".join(display(t) for t in prefix)
    desc = (f"The {T} by {T} mask of the first example, “{words}”, left-padded with PAD. Everything "
            "above the diagonal is blocked (later slots). In the last rows, the real tokens may not read the PAD "
            "columns. Zoomed on the last slots: " +
            "; ".join(f"{labels[a]} may read {', '.join(open_rows[s]) or 'nothing shown'}"
                      for a, s in enumerate(slots)) + ".")
    body = svg("mask", width, height, "The attention mask of the first example", desc, "".join(parts))
    cap = (f"**The mask as a picture.** Rows are receivers, columns are sources, for “{words}” "
           f"in {T} slots. The empty triangle above the diagonal is the future; the band at the bottom left "
           "stops the real tokens from reading PAD. Computed by `forward_full` of the model's own code.")
    return body, cap


# ---------------------------------------------------------------------------
# Page 3: three tokenizers.

TRAIN_LIMIT_BYTES = 100_000_000  # a bigger stories file (the full 1.9 GB one) is left to the pipeline step


def subwords_result() -> tuple[dict, str]:
    """Train the byte-pair encoder now when the stories are there; otherwise use the pipeline's cache."""
    _project()
    from export.data import DATA_ENV, DEFAULT_DATA, DataError
    from export.lesson import subwords

    stories = Path(os.environ.get(DATA_ENV) or DEFAULT_DATA)
    if not stories.is_file():
        log.info("figures: no stories at %s; page 3 uses wasm_assets/subwords.json", stories)
    elif stories.stat().st_size > TRAIN_LIMIT_BYTES:
        log.info("figures: %s is too big to read at every build; page 3 uses wasm_assets/subwords.json", stories)
    else:
        try:
            return subwords.build(stories), "trained during this build"
        except (DataError, OSError) as exc:
            log.info("figures: the stories could not be read (%s); page 3 uses wasm_assets/subwords.json", exc)
    data = _json("subwords.json")
    if data.get("schema") != subwords.SCHEMA:
        raise FigureError(f"wasm_assets/subwords.json has schema {data.get('schema')!r}, expected "
                          f"{subwords.SCHEMA!r}; rerun `python -m export.lesson.subwords`")
    return data, "read from wasm_assets/subwords.json (the stories were not on disk)"


def figure_tokenizers() -> tuple[str, str]:
    data, origin = subwords_result()
    rows = [("words (ours)", data["tokens"]["words"]), ("subwords (BPE)", data["tokens"]["subwords"]),
            ("characters", data["tokens"]["characters"])]
    w_window = data["window"]
    W = 400
    parts = []
    y = 8
    desc_rows = []
    for label, toks in rows:
        parts.append(text(4, y + 14, f"{label}: {len(toks)} tokens", "mha-fig__label", weight="700"))
        y += 22
        x = 4
        first_window = len(toks) - w_window
        for k, t in enumerate(toks):
            shown = "␣" if t == " " else t
            tw = max(16, 8 * len(shown) + 10)
            if x + tw > W - 4:
                x = 4
                y += 28
            cls = "mha-chip mha-chip--window" if k >= first_window else "mha-chip"
            parts.append(rect(x, y, tw, 22, cls, rx=4))
            parts.append(text(x + tw / 2, y + 15.5, shown, "mha-chip__text", anchor="middle", size=FONT - 1))
            x += tw + 4
        y += 36
        window = [("space" if t == " " else t) for t in toks[-w_window:]]
        desc_rows.append(f"{label}, {len(toks)} tokens: {' | '.join('space' if t == ' ' else t for t in toks)}; "
                         f"the last {w_window} are {' | '.join(window)}")
    parts.append(rect(4, y - 6, 14, 12, "mha-chip mha-chip--window", rx=3))
    parts.append(text(24, y + 4, f"the last {w_window} tokens: what a {w_window}-token window would hold",
                      "mha-fig__small", size=FONT - 2))
    height = y + 12
    desc = f"“{data['example']}” tokenized three ways. " + ". ".join(desc_rows) + "."
    body = svg("tokenizers", W, height, f"“{data['example']}” as words, subwords and characters", desc,
               "".join(parts))
    cap = (f"**One text, three tokenizers.** “{data['example']}” split by our word rules, by a byte-pair "
           f"encoder with {data['vocab_size']:,} items that Hugging Face *tokenizers* learned from our "
           f"{data['training_stories']:,} training stories ({origin}), and into single characters "
           "(␣ is a space). The outlined tokens are the last "
           f"{w_window}: all that a {w_window}-token window would hold.")
    return body, cap


# ---------------------------------------------------------------------------
# Page 5: validation traces, zoomed, and where the parameters are.

MODEL_CLASS = {"mlp": "mha-model--mlp", "one_head": "mha-model--one", "four_heads": "mha-model--four"}


ZOOM_BAND = 0.1


def _mean_trace(runs):
    steps = [u for u, _ in runs[0]["trace"]]
    return steps, [sum(r["trace"][k][1] for r in runs) / len(runs) for k in range(len(steps))]


def figure_traces_zoom() -> tuple[str, str]:
    ev = _json("evidence.json")
    labels = ev["protocol"]["labels"]
    runs = {m: [r for r in ev["runs"] if r["model"] == m] for m in ("one_head", "four_heads")}
    steps, one = _mean_trace(runs["one_head"])
    _, four = _mean_trace(runs["four_heads"])
    # zoom onto the flat part, where the gap shows: from the first evaluation after which both averages
    # stay within ZOOM_BAND nats of their final value
    start = 0
    for k in range(len(steps)):
        if abs(one[k] - one[-1]) > ZOOM_BAND or abs(four[k] - four[-1]) > ZOOM_BAND:
            start = k + 1
    start = min(start, len(steps) - 2)
    x0, x1 = steps[start], steps[-1]
    vals = [v for m in runs for r in runs[m] for u, v in r["trace"] if u >= x0]
    y0, y1 = min(vals), max(vals)
    pad = (y1 - y0) * 0.06
    y0, y1 = y0 - pad, y1 + pad
    W, Hh = 400, 280
    ml, mr, mt, mb = 48, 20, 34, 40
    pw, ph = W - ml - mr, Hh - mt - mb

    def X(u):
        return ml + (u - x0) / (x1 - x0) * pw

    def Y(v):
        return mt + (y1 - v) / (y1 - y0) * ph

    parts = [rect(ml, mt, pw, ph, "mha-fig__plot")]
    tick = _nice_step(y1 - y0, 5)
    v = math.ceil(y0 / tick) * tick
    while v <= y1:
        parts.append(line(ml, Y(v), ml + pw, Y(v), "mha-fig__grid"))
        parts.append(text(ml - 4, Y(v) + 4, f"{v:.2f}", "mha-fig__small", anchor="end", size=FONT - 2))
        v += tick
    xt = _nice_step(x1 - x0, 5)
    u = math.ceil(x0 / xt) * xt
    while u <= x1:
        parts.append(line(X(u), mt + ph, X(u), mt + ph + 4, "mha-fig__axis"))
        parts.append(text(X(u), mt + ph + 16, f"{u:,.0f}", "mha-fig__small", anchor="middle", size=FONT - 2))
        u += xt
    parts.append(text(ml + pw / 2, Hh - 6, "update", "mha-fig__small", anchor="middle", size=FONT - 2))
    parts.append(f'<text transform="translate(11,{mt + ph / 2:g}) rotate(-90)" text-anchor="middle" '
                 f'class="mha-fig__small" font-size="{FONT - 2}">validation loss</text>')
    desc = []
    for m in ("one_head", "four_heads"):
        for r in runs[m]:
            pts = [(u, v) for u, v in r["trace"] if u >= x0]
            d = " ".join(f"{'M' if k == 0 else 'L'}{X(u):.1f},{Y(v):.1f}" for k, (u, v) in enumerate(pts))
            parts.append(path(d, f"mha-trace {MODEL_CLASS[m]}"))
            parts.append(f'<circle cx="{X(r["best_update"]):.1f}" cy="{Y(r["val_loss"]):.1f}" r="3.5" '
                         f'class="mha-trace__best {MODEL_CLASS[m]}"/>')
            desc.append(f"{labels[m]} seed {r['seed']}: from {pts[0][1]:.3f} at update {pts[0][0]:,} to "
                        f"{pts[-1][1]:.3f}; best {r['val_loss']:.3f} at update {r['best_update']:,}")
    # legend
    for k, m in enumerate(("one_head", "four_heads")):
        lx = ml + k * 140
        parts.append(line(lx, 14, lx + 24, 14, f"mha-trace {MODEL_CLASS[m]}"))
        parts.append(text(lx + 30, 18, labels[m], "mha-fig__label", size=FONT - 1))
    body = svg("traces-zoom", W, Hh, "Validation loss of the one-head and four-head runs, zoomed", "; ".join(desc) + ".",
               "".join(parts))
    cap = (f"**Zoomed in where they part.** The {len(runs['one_head'])} one-head runs (dashed) and the "
           f"{len(runs['four_heads'])} four-head runs (solid) from update {x0:,}, after which both models' averages "
           f"stay within {ZOOM_BAND} of their final values, to the end; the vertical axis covers only these "
           "values. Dots mark each run's chosen checkpoint.")
    return body, cap


def _nice_step(span: float, n: int) -> float:
    raw = span / n
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


PARAM_GROUPS = (  # module name prefix -> group shown on page 5
    ("embeddings", ("token_embedding", "position_embedding")),
    ("attention projections", ("W_Q", "W_K", "W_V", "W_O")),
    ("hidden layer", ("hidden_layer",)),
    ("vocabulary head", ("vocab_head",)),
)


def parameter_groups() -> dict[str, dict[str, int]]:
    """Parameters per group for each model, counted on the models the pipeline builds, checked against evidence."""
    _project()
    from export.models import build_model

    ev = _json("evidence.json")
    c = _trained_config()
    out = {}
    for m in ev["protocol"]["models"]:
        model = build_model(m, c["C"], c["T"], d_model=c["D"], hidden=c["hidden"])
        groups = {g: 0 for g, _ in PARAM_GROUPS}
        for name, p in model.named_parameters():
            group = next((g for g, prefixes in PARAM_GROUPS if name.split(".")[0] in prefixes), None)
            if group is None:
                raise FigureError(f"parameter {name} of {m} belongs to no group of PARAM_GROUPS")
            groups[group] += p.numel()
        expected = ev["aggregates"][m]["parameters"]
        if sum(groups.values()) != expected:
            raise FigureError(f"{m}: the code builds {sum(groups.values()):,} parameters but evidence.json says "
                              f"{expected:,}; rerun the pipeline")
        out[m] = groups
    return out


def figure_parameters() -> tuple[str, str]:
    ev = _json("evidence.json")
    labels = ev["protocol"]["labels"]
    groups = parameter_groups()
    biggest = max(sum(g.values()) for g in groups.values())
    W = 400
    ml = 8
    pw = W - 2 * ml
    parts = []
    y = 8
    desc = []
    for m, g in groups.items():
        total = sum(g.values())
        parts.append(text(ml, y + 12, f"{labels[m]}: {total:,} parameters", "mha-fig__label", weight="700"))
        y += 18
        x = ml
        for k, (name, _) in enumerate(PARAM_GROUPS):
            w = pw * g[name] / biggest
            if g[name]:
                parts.append(rect(x, y, w, 20, f"mha-param mha-param--{k}"))
            x += w
        y += 24
        share = [f"{name} {g[name]:,} ({g[name] / total:.0%})" for name, _ in PARAM_GROUPS if g[name]]
        parts.append(text(ml, y + 10, " · ".join(f"{g[n] / total:.0%}" for n, _ in PARAM_GROUPS if g[n]) +
                          "  (" + ", ".join(n.split()[0] for n, _ in PARAM_GROUPS if g[n]) + ")",
                          "mha-fig__small", size=FONT - 3))
        y += 22
        desc.append(f"{labels[m]}, {total:,} parameters: " + ", ".join(share))
    for k, (name, _) in enumerate(PARAM_GROUPS):
        lx = ml + (k % 2) * 200
        ly = y + (k // 2) * 18
        parts.append(rect(lx, ly, 12, 12, f"mha-param mha-param--{k}"))
        parts.append(text(lx + 17, ly + 10, name, "mha-fig__small", size=FONT - 2))
    height = y + 2 * 18 + 4
    body = svg("parameters", W, height, "Where each model's parameters are", "; ".join(desc) + ".", "".join(parts))
    cap = ("**Where the parameters are.** Each bar is one model, drawn to the same scale, split into its "
           "embeddings (token and position tables), attention projections (W_Q, W_K, W_V, W_O), hidden layer "
           "and vocabulary head. Counted on the models `export/models.py` builds, and checked against the "
           "totals in the evidence. One head and four heads split the same projections differently, so their "
           "bars are identical.")
    return body, cap


FIGURES = {
    "coat-query": figure_coat_query,
    "coat-heads": figure_coat_heads,
    "fisherman-queries": figure_fisherman_queries,
    "operation-flow": figure_operation_flow,
    "model-map": figure_model_map,
    "mask": figure_mask,
    "tokenizers": figure_tokenizers,
    "traces-zoom": figure_traces_zoom,
    "parameters": figure_parameters,
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
    return (f'\n<figure class="mha-fig" id="fig-{name}" data-fig="{name}">'
            f'<div class="mha-fig__scroll">{body}</div>{STATUS.get(name, "")}'
            f"<figcaption>{_caption_html(caption)}</figcaption></figure>\n")


def on_page_markdown(markdown: str, page, config, files) -> str:
    if "::figure::" not in markdown:
        return markdown

    def one(m: re.Match) -> str:
        try:
            return render(m.group("name"))
        except FigureError as exc:
            raise PluginError(f"{page.file.src_uri}: figure {m.group('name')}: {exc}") from None

    return DIRECTIVE.sub(one, markdown)
