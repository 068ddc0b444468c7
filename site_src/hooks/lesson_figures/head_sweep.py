"""Page 5, "How many heads?": test perplexity against head count, from the evidence's ``head_sweep``."""

from __future__ import annotations

import math

from .common import FigureError, load_json
from .svg import FONT, line, rect, svg, text, y_title


def sweep() -> dict:
    ev = load_json("evidence.json")
    if "head_sweep" not in ev:
        raise FigureError("evidence.json has no head_sweep section: run `python -m export sweep`, then the evidence")
    return ev["head_sweep"]


def _ticks(lo: float, hi: float, n: int = 4) -> list[float]:
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if raw <= m * mag)
    first = math.ceil(lo / step) * step
    return [first + k * step for k in range(int((hi - first) / step) + 1)]


DOT_STEP = 7  # between a count's seed dots
DOT_ROW = 6  # the most seeds a count's row holds inside its slot


def figure_head_sweep() -> tuple[str, str]:
    data = sweep()
    models = data["models"]
    paired = data["findings"]["paired"]
    ref = paired["reference"]
    every = [r for m in models for r in m["runs"] + m.get("extra_runs", [])]
    values = [r["test_perplexity"] for r in every]
    values += [m["perplexity_mean"] + s * m["perplexity_sd"] for m in models for s in (-1, 1)]
    pad = (max(values) - min(values)) * 0.08
    y0, y1 = min(values) - pad, max(values) + pad
    # the second panel: each count minus the reference, seed by seed, with the 95 % interval
    comps = {name: c for name, c in paired["all"].items()}
    dvals = [0.0] + [d for c in comps.values() for d in c["differences"]]
    dvals += [v for c in comps.values() for v in (c["low"], c["high"]) if v is not None]
    dpad = (max(dvals) - min(dvals)) * 0.08
    d0, d1 = min(dvals) - dpad, max(dvals) + dpad
    W, H = 380, 500
    ml, mr, mt, mb = 50, 14, 16, 58
    pw, ph = W - ml - mr, 216
    top2 = mt + ph + mb + 24  # the second panel's top
    ph2 = H - top2 - 40
    steps = [math.log2(m["heads"]) for m in models]
    s0, s1 = min(steps), max(steps)

    # A count's seed dots sit in a row left of its x (up to DOT_ROW of them), its mean tick right of it:
    # the first count starts far enough in, and the last ends early enough, for both to stay in the plot.
    left, right = 12 + DOT_STEP * (DOT_ROW - 1) + 6, 14 + 6

    def X(heads: int) -> float:
        return ml + left + (math.log2(heads) - s0) / (s1 - s0) * (pw - left - right)

    def Y(v: float) -> float:
        return mt + (y1 - v) / (y1 - y0) * ph

    def Y2(v: float) -> float:
        return top2 + (d1 - v) / (d1 - d0) * ph2

    def dots(x: float, ys: list[float], cls: list[str]) -> list[str]:
        if len(ys) > DOT_ROW:
            raise FigureError(f"head_sweep has {len(ys)} runs of one model; the figure's row holds {DOT_ROW}")
        return [
            f'<circle cx="{x - 8 - DOT_STEP * k:.1f}" cy="{y:.1f}" r="3.6" class="{c}"/>'
            for k, (y, c) in enumerate(zip(ys, cls))
        ]

    labels = {m["name"]: f"{m['heads']} head{'s' if m['heads'] > 1 else ''}" for m in models}
    parts = [rect(ml, mt, pw, ph, "mha-fig__plot")]
    for v in _ticks(y0, y1):
        parts.append(line(ml, Y(v), ml + pw, Y(v), "mha-fig__grid"))
        parts.append(text(ml - 5, Y(v) + 4, f"{v:g}", "mha-fig__small", anchor="end", size=FONT))
    desc = []
    for m in models:
        x = X(m["heads"])
        mean, sd = m["perplexity_mean"], m["perplexity_sd"]
        parts.append(line(x, Y(mean - sd), x, Y(mean + sd), "mha-sweep__sd"))
        # the mean's tick to the right of the sd bar, the seeds' dots in a row to its left: no dot covers it
        parts.append(line(x - 3, Y(mean), x + 14, Y(mean), "mha-sweep__mean"))
        runs = m["runs"] + m.get("extra_runs", [])
        parts += dots(
            x,
            [Y(r["test_perplexity"]) for r in runs],
            ["mha-sweep__dot"] * len(m["runs"])
            + ["mha-sweep__dot mha-sweep__dot--extra"] * len(m.get("extra_runs", [])),
        )
        parts.append(text(x, mt + ph + 18, str(m["heads"]), "mha-fig__label", anchor="middle", size=FONT))
        parts.append(text(x, mt + ph + 34, f"×{m['head_dim']}", "mha-fig__small", anchor="middle", size=FONT))
        seeds = ", ".join(f"seed {r['seed']} {r['test_perplexity']:.2f}" for r in m["runs"])
        extra = "".join(f"; extra seed {r['seed']} {r['test_perplexity']:.2f}" for r in m.get("extra_runs", []))
        desc.append(f"{labels[m['name']]} of width {m['head_dim']}: mean {mean:.2f} ± {sd:.2f} ({seeds}{extra})")
    parts.append(
        text(ml + pw / 2, mt + ph + 50, "heads × head width (log scale)", "mha-fig__small", anchor="middle", size=FONT)
    )
    parts.append(y_title(mt + ph / 2, "test perplexity"))

    parts.append(text(ml, top2 - 8, f"minus {labels[ref]}, seed by seed (95 % interval)", "mha-fig__label", size=FONT))
    parts.append(rect(ml, top2, pw, ph2, "mha-fig__plot"))
    for v in _ticks(d0, d1):
        parts.append(line(ml, Y2(v), ml + pw, Y2(v), "mha-fig__grid"))
        parts.append(text(ml - 5, Y2(v) + 4, f"{v:+g}" if v else "0", "mha-fig__small", anchor="end", size=FONT))
    parts.append(line(ml, Y2(0), ml + pw, Y2(0), "mha-sweep__zero"))
    for m in models:
        x = X(m["heads"])
        if m["name"] == ref:
            parts.append(text(x, Y2(0) - 6, "ref.", "mha-fig__small", anchor="middle", size=FONT))
            continue
        c = comps[m["name"]]
        if c["low"] is not None:
            parts.append(line(x, Y2(c["low"]), x, Y2(c["high"]), "mha-sweep__ci"))
            for v in (c["low"], c["high"]):
                parts.append(line(x - 5, Y2(v), x + 5, Y2(v), "mha-sweep__ci"))
            parts.append(line(x - 3, Y2(c["mean"]), x + 14, Y2(c["mean"]), "mha-sweep__mean"))
        parts += dots(x, [Y2(d) for d in c["differences"]], ["mha-sweep__diff"] * len(c["differences"]))
        said = {"behind": "behind", "ahead": "ahead", "not_separated": "not separated"}[c["outcome"]]
        interval = f"95 % interval {c['low']:+.2f} to {c['high']:+.2f}" if c["low"] is not None else "no interval"
        desc.append(
            f"{labels[m['name']]} minus {labels[ref]}, seed by seed: "
            f"{', '.join(f'{d:+.2f}' for d in c['differences'])}; mean {c['mean']:+.2f}, {interval} "
            f"over {c['n']} seeds: {said}"
        )
    parts.append(y_title(top2 + ph2 / 2, "difference"))
    body = svg(
        "head-sweep",
        W,
        H,
        f"Test perplexity against the number of heads, and each count paired with {labels[ref]}",
        "; ".join(desc) + ".",
        "".join(parts),
    )
    n_extra = sum(len(m.get("extra_runs", [])) for m in models)
    extra = " (hollow: the extra seeds run so far)" if n_extra else ""
    cap = (
        f"**Test perplexity per head count** (head width below; {data['d_model']} in all): a dot per seed"
        f"{extra}, the tick at the mean of the source's {len(data['seeds'])} seeds, the bar ± one standard "
        f"deviation. Lower is better. **Below**, each count minus {labels[ref]} seed by seed: a dot per seed, "
        f"the tick at the mean difference, the bar its 95 % interval; above the zero line, worse than "
        f"{labels[ref]}."
    )
    return body, cap
