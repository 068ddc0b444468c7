"""Page 5: the one-head and four-head validation traces, zoomed, and where each model's parameters are."""
from __future__ import annotations

import math

from .common import attention_models, load_json, page_data
from .svg import FONT, line, path, rect, svg, text


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
    for m in runs:
        for r in runs[m]:
            pts = [(u, v) for u, v in r["trace"] if u >= x0]
            d = " ".join(f"{'M' if k == 0 else 'L'}{X(u):.1f},{Y(v):.1f}" for k, (u, v) in enumerate(pts))
            parts.append(path(d, f"mha-trace {cls[m]}"))
            parts.append(f'<circle cx="{X(r["best_update"]):.1f}" cy="{Y(r["val_loss"]):.1f}" r="3.5" '
                         f'class="mha-trace__best mha-model--{m}"/>')
            desc.append(f"{labels[m]} seed {r['seed']}: from {pts[0][1]:.3f} at update {pts[0][0]:,} to "
                        f"{pts[-1][1]:.3f}; best {r['val_loss']:.3f} at update {r['best_update']:,}")
    # legend
    for k, m in enumerate(runs):
        lx = ml + k * 140
        parts.append(line(lx, 14, lx + 24, 14, f"mha-trace {cls[m]}"))
        parts.append(text(lx + 30, 18, labels[m], "mha-fig__label", size=FONT - 1))
    body = svg("traces-zoom", W, Hh, "Validation loss of the one-head and four-head runs, zoomed", "; ".join(desc) + ".",
               "".join(parts))
    cap = (f"**Zoomed in where they part.** The {len(runs[single])} one-head runs (dashed) and the "
           f"{len(runs[most])} four-head runs (solid) from update {x0:,}, after which both models' averages "
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
    return {m: {g: sum(counted[m]["parts"].get(p, {"count": 0})["count"] for p in keys) for g, keys in PARAM_GROUPS}
            for m in ev["protocol"]["models"]}


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
           "and vocabulary head. Counted from the protocol's sizes (`export/lesson/results.py`, like the "
           "table of parts further down), and checked against the totals in the evidence. One head and four heads split the same projections differently, so their "
           "bars are identical.")
    return body, cap

