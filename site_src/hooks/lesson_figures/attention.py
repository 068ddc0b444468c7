"""Pages 1 and 2: the weights of one or more queries, and the whole two-head operation as a flow."""

from __future__ import annotations

from .common import FigureError, attention_models, load_json, page_data
from .svg import FONT, arrow, box, display, line, path, pct, rect, shape, svg, text


# Weight bars: one row per source token, one column per head.


def weight_bars(
    name: str,
    title: str,
    tokens: list[str],
    weights: list[list[float]],
    receiver: int,
    head_labels: list[str],
    head_classes: list[str],
    note_rows: dict[int, str] | None = None,
) -> str:
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
        parts.append(
            text(
                label_w - 6,
                y + row_h * 0.65,
                shown,
                "mha-fig__label",
                anchor="end",
                weight="700" if j == receiver else None,
                size=FONT - 1,
            )
        )
        for h in range(heads):
            x0 = label_w + h * col_w
            w = weights[h][j]
            bar_w = (col_w - 42) * w
            parts.append(rect(x0, y + 4, bar_w, row_h - 8, f"mha-fig__bar {head_classes[h]}"))
            parts.append(
                text(
                    x0 + bar_w + 3,
                    y + row_h * 0.68,
                    pct(w),
                    "mha-fig__value",
                    weight="700" if j == best[h] else None,
                    size=FONT - 1,
                )
            )
    desc = f"Receiver: {display(tokens[receiver])} (marked ▸). " + "; ".join(
        f"{head_labels[h]}: "
        + ", ".join(f"{display(t)} {pct(weights[h][j])}" for j, t in enumerate(tokens))
        + f" (largest on {display(tokens[best[h]])})"
        for h in range(heads)
    )
    return svg(name, width, height, title, desc, "".join(parts))


def figure_coat_query() -> tuple[str, str]:
    tokens, weights, unknown = _coat_attention(1)
    last = display(tokens[-1])
    body = weight_bars(
        "coat-query",
        f"One query at “{last}”: the one-head model's weights over the sentence",
        tokens,
        weights,
        len(tokens) - 1,
        ["the one head"],
        ["h0"],
        note_rows={j: "(UNK)" for j in unknown},
    )
    cap = (
        f"**One query, one set of weights.** The trained one-head model (seed 11) at the receiver "
        f"*{last}* (marked ▸): one weight per source, BOS included, adding up to 1." + _unknown_note(tokens, unknown)
    )
    return body, cap


def figure_coat_heads() -> tuple[str, str]:
    tokens, weights, unknown = _coat_attention(attention_models()[-1]["heads"])
    last = display(tokens[-1])
    body = weight_bars(
        "coat-heads",
        f"Four queries at “{last}”: the four-head model's weights, one column per head",
        tokens,
        weights,
        len(tokens) - 1,
        [f"head {h + 1}" for h in range(len(weights))],
        [f"h{h}" for h in range(len(weights))],
        note_rows={j: "(UNK)" for j in unknown},
    )
    cap = (
        f"**Same receiver, four queries.** The trained four-head model: each head has its own query at "
        f"*{last}* and its own weights; each column adds up to 1."
    )
    return body, cap


def _unknown_note(tokens, unknown) -> str:
    if not unknown:
        return ""
    names = " and ".join(f"*{tokens[j]}*" for j in unknown)
    return (
        f" The model's vocabulary has no {names}, so it reads {'them' if len(unknown) > 1 else 'it'} "
        "as the unknown token UNK (page 3 explains why)."
    )


def _coat_attention(heads: int):
    """Final-query attention of the shipped attention model with ``heads`` heads over BOS + page 1's prefix.

    Computed by the page-data stage (``export/lesson/page_data.py``) with the ONNX models the browser runs.
    """
    coat = page_data()["coat"]
    model = next((m["name"] for m in attention_models() if m["heads"] == heads), None)
    if model is None or model not in coat["weights"]:
        raise FigureError(
            f"no shipped attention model with {heads} head(s) in page_data.json; rerun `python -m export pagedata`"
        )
    return coat["tokens"], coat["weights"][model], coat["unknown"]


def figure_fisherman_queries() -> tuple[str, str]:
    ws = load_json("worksheet.json")
    tokens, A = ws["tokens"], ws["A"]
    r = len(tokens) - 1
    weights = [A[h][r] for h in range(ws["heads"])]
    body = weight_bars(
        "fisherman-queries",
        "Two queries at the final “the”: the worksheet's two heads",
        tokens,
        weights,
        r,
        [f"head {h + 1}" for h in range(ws["heads"])],
        [f"h{h}" for h in range(ws["heads"])],
    )
    best = [tokens[max(range(len(tokens)), key=lambda j: w[j])] for w in weights]
    cap = (
        f"**Same receiver, two queries.** At the final *the* (slot {r}; slots count from 0) each head of page 2's "
        "worksheet has its own query and so its own weights over the ten known tokens. "
        f"Head 1's largest weight is on *{best[0]}*, head 2's on *{best[1]}*. "
        "These are seeded teaching numbers chosen to show the two readings (page 2 says how), "
        "not a trained model."
    )
    return body, cap


# Page 2: the whole operation as a flow.


def figure_operation_flow() -> tuple[str, str]:
    ws = load_json("worksheet.json")
    T, D, H, dh = len(ws["tokens"]), ws["d_model"], ws["heads"], ws["head_dim"]
    W = 400
    parts = []
    lane_w = (W - 60) / H
    cx = W / 2 + 10
    # E
    parts.append(
        box(cx - 110, 8, 220, 44, [(f"E  {shape([T, D])}", ""), ("token rows + position rows", "")], learned=False)
    )
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
        g.append(
            path(
                f"M{vx:g},{y_lane + box_h:g} L{vx:g},{y_lane + 4 * (box_h + gap) - 2:g}",
                "mha-fig__wire mha-fig__wire--value",
            )
        )
        g.append(
            text(
                vx + (-4 if h == H - 1 else 4),
                y_lane + 4 * (box_h + gap) - 8,
                "V",
                "mha-fig__small",
                anchor="end" if h == H - 1 else "start",
                size=FONT - 1,
            )
        )
        g.append("</g>")
        parts.append("".join(g))
        # E feeds every head: same input
        parts.append(arrow(cx, 52, x + w / 2, y_lane - 26))
    parts.append(
        text(
            cx,
            74,
            "both heads read the same E",
            "mha-fig__small mha-fig__halo",
            anchor="middle",
            size=FONT - 1,
            weight="700",
        )
    )
    y = lane_bottom + 22
    parts.append(
        box(
            cx - 130,
            y,
            260,
            40,
            [(f"concatenate [H₁ | H₂]  {shape([T, H * dh])}", ""), ("head 1 columns, then head 2 columns", "")],
        )
    )
    for h in range(H):
        x = 40 + h * lane_w + lane_w / 2
        parts.append(arrow(x, lane_bottom + 2, cx + (h - (H - 1) / 2) * 60, y - 2))
    y2 = y + 58
    parts.append(arrow(cx, y + 40, cx, y2 - 2))
    parts.append(
        box(
            cx - 130,
            y2,
            260,
            40,
            [(f"× W_O {shape([D, D])} → update", ""), (f"{shape([T, D])}: mixes both heads", "")],
            learned=True,
        )
    )
    y3 = y2 + 58
    parts.append(arrow(cx, y2 + 40, cx, y3 - 2))
    # The output box starts right of the boxes above, so the residual route from E ends in a run long
    # enough to carry its label level, in the stepper's words: E is added back to the update.
    res_x = 112
    parts.append(
        box(
            res_x,
            y3,
            W - 6 - res_x,
            40,
            [(f"output = E + update  {shape([T, D])}", ""), ("the residual: the block adds a change", "")],
        )
    )
    parts.append(
        path(
            f"M{cx - 110:g},30 L14,30 L14,{y3 + 20:g} L{res_x - 2:g},{y3 + 20:g}",
            "mha-fig__wire mha-fig__wire--residual",
        )
    )
    parts.append(text(19, y3 + 15, "E, added back", "mha-fig__small", size=FONT - 1))
    height = y3 + 50
    desc = (
        f"E, {T} rows of width {D}, feeds both heads. In each head: its own projections give Q, K and V "
        f"of shape {T} by {dh}; scores Q K transposed over the square root of {dh}, {T} by {T}; the mask "
        f"hides later sources; softmax gives the weights A; H = A V, {T} by {dh}, with V taking a route "
        f"that skips the scores. The two H are concatenated to {T} by {H * dh}, multiplied by W_O "
        f"({D} by {D}) to an update of {T} by {D}, and added to E (the residual) to give the output."
    )
    body = svg(
        "operation-flow",
        W,
        height,
        "The complete two-head operation, with the worksheet's shapes",
        desc,
        "".join(parts),
    )
    cap = (
        "**The whole operation.** Both heads read the same E with their own matrices (thick borders: "
        "learned numbers); the dashed V route skips the scores; W_O mixes the joined messages. The "
        "explorer's head is highlighted."
    )
    return body, cap
