"""Page 4: the map of the trained model (every box a link to its stage) and the mask as a picture."""

from __future__ import annotations

from .common import load_json, page_data, trained_config
from .svg import FONT, arrow, box, display, esc, path, rect, shape, svg, text


STAGES = {  # map box -> the page-4 stage it stands for (a box leads to the stage's numbers, "<id>-detail")
    "tokens": "stage-token-rows",
    "positions": "stage-position-rows",
    "E": "stage-position-rows",
    "qkv": "stage-qkv",
    "scores": "stage-scores",
    "mask": "stage-mask",
    "A": "stage-weights",
    "AV": "stage-messages",
    "concat": "stage-concat",
    "wo": "stage-concat",
    "residual": "stage-concat",
    "hidden": "stage-prediction",
    "vocab": "stage-prediction",
    "loss": "stage-loss",
    "generate": "generation",
}


def figure_model_map() -> tuple[str, str]:
    c = trained_config()
    C, T, D, Hd, H = c["C"], c["T"], c["D"], c["hidden"], c["heads"]
    dh = D // H
    W = 400
    cx = W / 2 + 8
    parts = []

    def link(key):
        # The stage's real numbers sit in the walkthrough's door: Material opens a closed
        # <details> that holds the address's target, so the box lands on them, not on the one-liner.
        stage = STAGES[key]
        return f"#{stage}-detail" if stage.startswith("stage-") else f"#{stage}"

    def b(key, x, y, w, h, lines, learned=False):
        label = " ".join(s for s, _ in lines) + " (go to this stage)"
        return box(x, y, w, h, lines, learned=learned, href=link(key), box_id=f"map-{key}", label=label)

    parts.append(text(cx, 14, f"X: token IDs {shape(['B', T])}", "mha-fig__label", anchor="middle", weight="700"))
    parts.append(arrow(cx - 60, 20, cx - 60, 34))
    parts.append(b("tokens", 30, 36, 175, 44, [("token embedding", ""), (f"table {shape([C, D])}", "")], True))
    parts.append(b("positions", 215, 36, 175, 44, [("position embedding", ""), (f"table {shape([T, D])}", "")], True))
    parts.append(arrow(117, 80, cx - 20, 100))
    parts.append(arrow(302, 80, cx + 20, 100))
    parts.append(
        b("E", cx - 120, 102, 240, 40, [(f"E = sum  {shape(['B', T, D])}", ""), ("token row + position row", "")])
    )
    parts.append(arrow(cx, 142, cx, 158))
    parts.append(
        b(
            "qkv",
            cx - 150,
            160,
            300,
            44,
            [(f"W_Q, W_K, W_V  {shape([D, D])} each", ""), (f"split: Q, K, V {shape(['B', H, T, dh])}", "")],
            True,
        )
    )
    lane_top = 232
    lane_w = (W - 44) / H
    lane_boxes = [
        ("scores", "scores", shape(["B", T, T])),
        ("mask", "mask", "−∞ if hidden"),
        ("A", "softmax A", shape(["B", T, T])),
        ("AV", "A V", shape(["B", T, dh])),
    ]
    bh, gap = 38, 14
    for h in range(H):
        x = 36 + h * lane_w + 3
        w = lane_w - 6
        g = [f'<g class="mha-lane" data-head="{h}">']
        bottom = lane_top + len(lane_boxes) * (bh + gap) - gap
        g.append(rect(x - 2, lane_top - 20, w + 4, bottom - lane_top + 24, f"mha-lane__bg h{h}-soft", rx=6))
        g.append(
            text(x + w / 2, lane_top - 6, f"head {h + 1}", f"h{h}-text", anchor="middle", weight="700", size=FONT - 1)
        )
        for k, (key, title, sub) in enumerate(lane_boxes):
            y = lane_top + k * (bh + gap)
            inner = box(x, y, w, bh, [(title, ""), (sub, "mha-fig__shape")], cls=f"h{h}-edge")
            anchor = f' id="map-{key}"' if h == 0 else ""  # the stages link back to head 1's box
            g.append(
                f'<a xlink:href="{link(key)}" class="mha-fig__link" aria-label="head {h + 1}: {esc(title)} '
                f'(go to this stage)"{anchor}>{inner}</a>'
            )
            if k:
                g.append(arrow(x + w / 2, y - gap, x + w / 2, y - 1))
        vx = x + w - 6
        g.append(
            path(
                f"M{vx:g},{lane_top - 10:g} L{vx:g},{lane_top + 3 * (bh + gap) - 1:g}",
                "mha-fig__wire mha-fig__wire--value",
            )
        )
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
    # The residual box starts right of centre-left, so the route from E ends in a run long enough to
    # carry its label level with the box, in the page's words: E is added back to the update.
    res_x = cx - 96
    parts.append(b("residual", res_x, y, cx + 150 - res_x, 36, [(f"E + update {shape(['B', T, D])}", "")]))
    res_y = y + 18
    parts.append(
        path(
            f"M{cx - 120:g},122 L12,122 L12,{res_y:g} L{res_x - 2:g},{res_y:g}", "mha-fig__wire mha-fig__wire--residual"
        )
    )
    parts.append(text(16, res_y - 5, "E, added back", "mha-fig__small", size=FONT - 1.5))
    y += 52
    parts.append(arrow(cx, y - 16, cx, y - 1))
    parts.append(
        b(
            "hidden",
            cx - 150,
            y,
            300,
            40,
            [
                (f"final slot {shape(['B', D])} → ReLU layer", ""),
                (f"weights {shape([D, Hd])} → {shape(['B', Hd])}", ""),
            ],
            True,
        )
    )
    y += 56
    parts.append(arrow(cx, y - 16, cx, y - 1))
    parts.append(
        b(
            "vocab",
            cx - 150,
            y,
            300,
            40,
            [("vocabulary head → logits", ""), (f"weights {shape([Hd, C])} → {shape(['B', C])}", "")],
            True,
        )
    )
    y += 58
    parts.append(arrow(cx - 40, y - 18, cx - 95, y - 1))
    parts.append(arrow(cx + 40, y - 18, cx + 95, y - 1))
    parts.append(b("loss", 20, y, 180, 40, [("training: loss", ""), (f"cross-entropy with y {shape(['B'])}", "")]))
    parts.append(b("generate", 210, y, 180, 40, [("generation", ""), ("pick a token, append, repeat", "")]))
    height = y + 48
    desc = (
        f"X, token IDs of shape B by {T}, looks up the token embedding table ({C} by {D}); the position table "
        f"({T} by {D}) is added, giving E of shape B by {T} by {D}. W_Q, W_K and W_V ({D} by {D}) give Q, K, V "
        f"split into {H} heads of width {dh}. Each of the {H} head lanes computes scores (B by {T} by {T}), "
        f"applies the mask, takes the softmax A and the messages A V (B by {T} by {dh}); V reaches A V without "
        f"passing through the scores. The messages are concatenated (B by {T} by {D}), W_O makes the update, "
        f"and the residual adds E. The final slot (B by {D}) goes through a ReLU layer of {Hd} units and the "
        f"vocabulary head to logits (B by {C}), which feed the loss in training and the choice of the next "
        "token in generation. Each box links to the stage of the walkthrough below."
    )
    body = svg(
        "model-map",
        W,
        height,
        "Map of the trained four-head model with tensor shapes",
        desc,
        "".join(parts),
        links=True,
    )
    cap = (
        f"**Where am I in the model?** The trained four-head model with its shapes (B examples, {T} slots, "
        f"width {D}, {H} heads of {dh}). Thick borders: learned parameters. Dashed: the value route into "
        "A V and the residual route from E. Every box opens its stage in the walkthrough below, with the "
        "model's numbers, and each stage links back here."
    )
    return body, cap


def figure_mask() -> tuple[str, str]:
    """The mask of the walkthrough's first example, as the model's own forward_full computes it."""
    wt = load_json("walkthrough.json")
    vocab = load_json("vocab.json")
    computed = page_data()["mask"]  # export/lesson/page_data.py: the model's own forward_full mask
    mask = [[c == "1" for c in row] for row in computed["blocked"]]  # True = blocked
    ids = computed["ids"]
    prefix = wt["rows"][0]["prefix"]
    T = wt["config"]["T"]
    real = [i != 0 for i in ids]
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
            parts.append(
                rect(
                    ox + j * cell,
                    oy + i * cell,
                    (k - j + 1) * cell,
                    cell,
                    kind(i, j),
                    extra=' shape-rendering="crispEdges"',
                )
            )
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
    labels = [("PAD" if not real[s] else display(vocab["itos"][ids[s]])) for s in slots]
    parts.append(text(ox, zy - 40, f"zoom: slots {slots[0]}–{slots[-1]}", "mha-fig__small", size=FONT - 2))
    for a, s in enumerate(slots):
        parts.append(text(zx - 4, zy + a * zs + zs * 0.62, labels[a], "mha-fig__label", anchor="end", size=FONT - 2))
        parts.append(
            f'<text transform="translate({zx + a * zs + zs * 0.6:g},{zy - 4:g}) rotate(-50)" '
            f'class="mha-fig__label" font-size="{FONT - 2}">{esc(labels[a])}</text>'
        )
        for b_, t in enumerate(slots):
            k = kind(s, t)
            parts.append(rect(zx + b_ * zs, zy + a * zs, zs, zs, f"{k} mha-mask__zoom"))
            mark = "✓" if k == "mha-mask--open" else "×"
            parts.append(
                text(
                    zx + b_ * zs + zs / 2,
                    zy + a * zs + zs * 0.66,
                    mark,
                    f"mha-mask__mark {k}-mark",
                    anchor="middle",
                    size=FONT,
                )
            )
    for k, (cls, label) in enumerate(
        (
            ("mha-mask--open", "may read (weight can be > 0)"),
            ("mha-mask--future", "later slot: blocked"),
            ("mha-mask--pad", "PAD source of a real token: blocked"),
        )
    ):
        parts.append(rect(ox, ly + k * 18, 12, 12, cls))
        parts.append(text(ox + 18, ly + k * 18 + 10, label, "mha-fig__small", size=FONT - 2))
    width = ox + T * cell + 12
    height = zy + n * zs + 6
    open_rows = {slots[a]: [labels[b] for b, t in enumerate(slots) if not mask[s][t]] for a, s in enumerate(slots)}
    words = " ".join(display(t) for t in prefix)
    desc = (
        f"The {T} by {T} mask of the first example, “{words}”, left-padded with PAD. Everything "
        "above the diagonal is blocked (later slots). In the last rows, the real tokens may not read the PAD "
        "columns. Zoomed on the last slots: "
        + "; ".join(f"{labels[a]} may read {', '.join(open_rows[s]) or 'nothing shown'}" for a, s in enumerate(slots))
        + "."
    )
    body = svg("mask", width, height, "The attention mask of the first example", desc, "".join(parts))
    cap = (
        f"**The mask as a picture.** Rows are receivers, columns are sources, for “{words}” "
        f"in {T} slots. The empty triangle above the diagonal is the future; the band at the bottom left "
        "stops the real tokens from reading PAD. Computed by `forward_full` of the model's own code."
    )
    return body, cap
