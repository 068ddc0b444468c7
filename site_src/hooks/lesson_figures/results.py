"""Page 5: the one-head and four-head validation traces, zoomed, and where each model's parameters are."""

from __future__ import annotations

import math

from .common import attention_models, load_json, page_data
from .svg import FONT, line, path, rect, svg, text, y_title


ZOOM_BAND = 0.1


def _mean_trace(runs):
    steps = [u for u, _ in runs[0]["trace"]]
    return steps, [sum(r["trace"][k][1] for r in runs) / len(runs) for k in range(len(steps))]


def figure_traces_zoom() -> tuple[str, str]:
    ev = load_json("evidence.json")
    labels = ev["protocol"]["labels"]
    # the single-head model (dashed) against the one with the most heads (solid), from the manifest
    single, most = attention_models()[0]["name"], attention_models()[-1]["name"]
    cls = {single: f"mha-model--{single} mha-trace--dashed", most: f"mha-model--{most}"}
    runs = {m: [r for r in ev["runs"] if r["model"] == m] for m in (single, most)}
    steps, one = _mean_trace(runs[single])
    _, four = _mean_trace(runs[most])
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
        parts.append(text(ml - 4, Y(v) + 4, f"{v:.2f}", "mha-fig__small", anchor="end", size=FONT - 1))
        v += tick
    xt = _nice_step(x1 - x0, 5)
    u = math.ceil(x0 / xt) * xt
    while u <= x1:
        parts.append(line(X(u), mt + ph, X(u), mt + ph + 4, "mha-fig__axis"))
        parts.append(text(X(u), mt + ph + 16, f"{u:,.0f}", "mha-fig__small", anchor="middle", size=FONT - 1))
        u += xt
    parts.append(text(ml + pw / 2, Hh - 6, "update", "mha-fig__small", anchor="middle", size=FONT - 1))
    parts.append(y_title(mt + ph / 2, "validation loss", size=FONT - 1))
    desc = []
    for m in runs:
        for r in runs[m]:
            pts = [(u, v) for u, v in r["trace"] if u >= x0]
            d = " ".join(f"{'M' if k == 0 else 'L'}{X(u):.1f},{Y(v):.1f}" for k, (u, v) in enumerate(pts))
            parts.append(path(d, f"mha-trace {cls[m]}"))
            parts.append(
                f'<circle cx="{X(r["best_update"]):.1f}" cy="{Y(r["val_loss"]):.1f}" r="3.5" '
                f'class="mha-trace__best mha-model--{m}"/>'
            )
            desc.append(
                f"{labels[m]} seed {r['seed']}: from {pts[0][1]:.3f} at update {pts[0][0]:,} to "
                f"{pts[-1][1]:.3f}; best {r['val_loss']:.3f} at update {r['best_update']:,}"
            )
    # legend
    for k, m in enumerate(runs):
        lx = ml + k * 140
        parts.append(line(lx, 14, lx + 24, 14, f"mha-trace {cls[m]}"))
        parts.append(text(lx + 30, 18, labels[m], "mha-fig__label", size=FONT - 1))
    body = svg(
        "traces-zoom",
        W,
        Hh,
        "Validation loss of the one-head and four-head runs, zoomed",
        "; ".join(desc) + ".",
        "".join(parts),
    )
    cap = (
        f"**Zoomed in where they part.** The {len(runs[single])} one-head runs (dashed) and the "
        f"{len(runs[most])} four-head runs (solid) from update {x0:,}, after which both models' averages "
        f"stay within {ZOOM_BAND} of their final values, to the end; the vertical axis covers only these "
        "values. Dots mark each run's chosen checkpoint."
    )
    return body, cap


def _nice_step(span: float, n: int) -> float:
    raw = span / n
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


# The bars' groups, as sums of the parts export/lesson/results.py counts (page 5's table).
PARAM_GROUPS = (
    ("embeddings", ("token_table", "position_table")),
    ("attention projections", ("attention",)),
    ("hidden layer", ("hidden",)),
    ("vocabulary head", ("vocab_head",)),
)


def parameter_groups(ev: dict) -> dict[str, dict[str, int]]:
    """Parameters per group for each model, from the same count as page 5's table (checked against evidence)."""
    counted = page_data()["results"]["parameters"]
    return {
        m: {g: sum(counted[m]["parts"].get(p, {"count": 0})["count"] for p in keys) for g, keys in PARAM_GROUPS}
        for m in ev["protocol"]["models"]
    }


def figure_parameters() -> tuple[str, str]:
    ev = load_json("evidence.json")
    labels = ev["protocol"]["labels"]
    groups = parameter_groups(ev)
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
        parts.append(
            text(
                ml,
                y + 10,
                " · ".join(f"{g[n] / total:.0%}" for n, _ in PARAM_GROUPS if g[n])
                + "  ("
                + ", ".join(n.split()[0] for n, _ in PARAM_GROUPS if g[n])
                + ")",
                "mha-fig__small",
                size=FONT - 1,
            )
        )
        y += 22
        desc.append(f"{labels[m]}, {total:,} parameters: " + ", ".join(share))
    for k, (name, _) in enumerate(PARAM_GROUPS):
        lx = ml + (k % 2) * 200
        ly = y + (k // 2) * 18
        parts.append(rect(lx, ly, 12, 12, f"mha-param mha-param--{k}"))
        parts.append(text(lx + 17, ly + 10, name, "mha-fig__small", size=FONT - 1))
    height = y + 2 * 18 + 4
    body = svg("parameters", W, height, "Where each model's parameters are", "; ".join(desc) + ".", "".join(parts))
    cap = (
        "**Where the parameters are.** Each bar is one model, drawn to the same scale, split into its "
        "embeddings (token and position tables), attention projections (W_Q, W_K, W_V, W_O), hidden layer "
        "and vocabulary head. Counted from the protocol's sizes (`export/lesson/results.py`, like the "
        "table of parts further down), and checked against the totals in the evidence. One head and four heads split the same projections differently, so their "
        "bars are identical."
    )
    return body, cap


def figure_traces() -> tuple[str, str]:
    """Every run's validation trace (evidence.json), in the site's colours: replaces the pipeline's matplotlib plot."""
    ev = load_json("evidence.json")
    labels = ev["protocol"]["labels"]
    models = [m for m in ev["protocol"]["models"] if any(r["model"] == m for r in ev["runs"])]
    runs = {m: [r for r in ev["runs"] if r["model"] == m] for m in models}
    pts = [(u, v) for m in models for r in runs[m] for u, v in r["trace"]]
    x0, x1 = 0, max(u for u, _ in pts)
    y0, y1 = min(v for _, v in pts), max(v for _, v in pts)
    pad = (y1 - y0) * 0.05
    y0, y1 = y0 - pad, y1 + pad
    W, Hh = 400, 300
    ml, mr, mt, mb = 50, 24, 40, 42
    pw, ph = W - ml - mr, Hh - mt - mb

    def X(u):
        return ml + (u - x0) / (x1 - x0) * pw

    def Y(v):
        return mt + (y1 - v) / (y1 - y0) * ph

    small = FONT  # axis numbers and legend at the figure's own size: 11 px or more on a 390 px phone
    parts = [rect(ml, mt, pw, ph, "mha-fig__plot")]
    tick = _nice_step(y1 - y0, 5)
    v = math.ceil(y0 / tick) * tick
    while v <= y1:
        parts.append(line(ml, Y(v), ml + pw, Y(v), "mha-fig__grid"))
        parts.append(
            text(ml - 5, Y(v) + 4, f"{v:.2f}".rstrip("0").rstrip("."), "mha-fig__small", anchor="end", size=small)
        )
        v += tick
    xt = _nice_step(x1 - x0, 4)
    u = 0
    while u <= x1:
        parts.append(line(X(u), mt + ph, X(u), mt + ph + 4, "mha-fig__axis"))
        parts.append(text(X(u), mt + ph + 17, f"{u:,.0f}", "mha-fig__small", anchor="middle", size=small))
        u += xt
    parts.append(text(ml + pw / 2, Hh - 5, "update", "mha-fig__small", anchor="middle", size=small))
    parts.append(y_title(mt + ph / 2, "validation loss (nats)", size=small))
    # the models' own colours (wasm_assets/palette.css); the single-head model dashed, as in the zoom below
    single = attention_models()[0]["name"]
    cls = {m: f"mha-model--{m}" + (" mha-trace--dashed" if m == single else "") for m in models}
    desc = []
    for m in models:
        for r in runs[m]:
            d = " ".join(f"{'M' if k == 0 else 'L'}{X(u):.1f},{Y(v):.1f}" for k, (u, v) in enumerate(r["trace"]))
            parts.append(path(d, f"mha-trace {cls[m]}"))
            parts.append(
                f'<circle cx="{X(r["best_update"]):.1f}" cy="{Y(r["val_loss"]):.1f}" r="4" '
                f'class="mha-trace__best mha-model--{m}"/>'
            )
            desc.append(
                f"{labels[m]} seed {r['seed']}: {r['trace'][0][1]:.3f} at update {r['trace'][0][0]:,}, "
                f"{r['trace'][-1][1]:.3f} at update {r['trace'][-1][0]:,}; chosen checkpoint {r['val_loss']:.3f} "
                f"at update {r['best_update']:,}"
            )
    # legend: one row above the plot, each entry as wide as its label
    lx = ml
    for m in models:
        parts.append(line(lx, 16, lx + 22, 16, f"mha-trace {cls[m]}"))
        parts.append(text(lx + 27, 20, labels[m], "mha-fig__label", size=small))
        lx += 27 + len(labels[m]) * 7.5 + 18
    body = svg(
        "traces",
        W,
        Hh,
        "Validation loss against update for every run of the three models",
        "; ".join(desc) + ".",
        "".join(parts),
    )
    seeds = sorted({r["seed"] for r in ev["runs"]})
    cap = (
        f"**Validation loss during training**, every model and seed ({', '.join(map(str, seeds))}), on the fixed "
        "validation slice; dots mark each run's chosen checkpoint (the lowest validation loss). Drawn from "
        "`evidence.json`."
    )
    return body, cap


# Short names for the atlas's kinds of source (heads.json "kinds" holds the full wording, used in the description).
ATLAS_SHORT = {
    "offset_0": "itself",
    "offset_1": "1 back",
    "offset_2": "2 back",
    "offset_3": "3 back",
    "offset_4_7": "4–7 back",
    "offset_8_plus": "8+ back",
    "bos": "BOS",
    "punctuation": "punctuation",
    "same_word": "same word",
    "after_same_word": "after same word",
}


def figure_head_atlas() -> tuple[str, str]:
    """Where each head looks (heads.json), as bars in the head colours: replaces the matplotlib atlas image."""
    heads = load_json("heads.json")
    kinds = list(heads["kinds"])
    one, most = attention_models()[0], attention_models()[-1]  # the manifest's one-head and most-heads models
    cols = [(one["label"], f"mha-model--{one['name']}", heads["atlas"][one["name"]]["heads"][0]["share"])]
    cols += [(f"head {h['head']}", f"h{h['head'] - 1}", h["share"]) for h in heads["atlas"][most["name"]]["heads"]]
    uniform = heads["atlas"][most["name"]]["uniform"]
    biggest = max(s[k] for _, _, s in cols for k in kinds)
    W = 400
    lw = 104  # the kinds' column
    cw = (W - lw - 4) / len(cols)
    rh = 30
    top = 50
    parts = [
        text(lw + cw / 2, 18, "1 head", "mha-fig__label", anchor="middle", weight="700"),
        text(lw + cw * 3, 18, "four heads", "mha-fig__label", anchor="middle", weight="700"),
        line(lw + cw + 4, 24, W - 4, 24, "mha-fig__axis"),
    ]
    for c, (name, _, _) in enumerate(cols):
        parts.append(
            text(lw + cw * (c + 0.5), 42, "model" if c == 0 else name.split()[1], "mha-fig__small", anchor="middle")
        )
    desc = []
    for r, k in enumerate(kinds):
        y = top + r * rh
        parts.append(text(lw - 6, y + 19, ATLAS_SHORT.get(k, k), "mha-fig__label", anchor="end"))
        parts.append(line(lw, y + rh, W - 4, y + rh, "mha-fig__grid"))
        for c, (_, cls, share) in enumerate(cols):
            x = lw + c * cw + 4
            w = (cw - 8) * share[k] / biggest
            fill = f"mha-trace__best {cls}" if c == 0 else cls
            parts.append(rect(x, y + 21, max(w, 0.8), 6, fill))
            parts.append(text(x + (cw - 8) / 2, y + 16, f"{share[k]:.0%}", "mha-fig__value", anchor="middle"))
        desc.append(
            f"{heads['kinds'][k]}: "
            + ", ".join(f"{n} {s[k]:.1%}" for n, _, s in cols)
            + f" (spread evenly: {uniform[k]:.1%})"
        )
    height = top + len(kinds) * rh + 6
    body = svg("head-atlas", W, height, "Where each head looks, on average", "; ".join(desc) + ".", "".join(parts))
    cap = (
        f"**Where each head looks**, on average over the {heads['windows']:,} windows of the {heads['split']} "
        f"split: the share of the final position's attention that lands on each kind of source, for the "
        f"one-head model and each head of the four-head model (seed {heads['seed']}). Bars are drawn to one "
        f"scale (the largest share, {biggest:.0%}, fills a cell); the shares of one head add up to more than "
        "100 % because a source can be of several kinds (punctuation two tokens back)."
    )
    return body, cap
