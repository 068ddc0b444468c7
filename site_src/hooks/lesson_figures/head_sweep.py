"""Page 5, "How many heads?": test perplexity against head count, from the evidence's ``head_sweep``."""
from __future__ import annotations

import math

from .common import FigureError, load_json
from .svg import FONT, line, rect, svg, text


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


def figure_head_sweep() -> tuple[str, str]:
    data = sweep()
    models = data["models"]
    values = [r["test_perplexity"] for m in models for r in m["runs"]]
    values += [m["perplexity_mean"] + s * m["perplexity_sd"] for m in models for s in (-1, 1)]
    pad = (max(values) - min(values)) * 0.08
    y0, y1 = min(values) - pad, max(values) + pad
    W, H = 380, 290
    ml, mr, mt, mb = 50, 14, 16, 58
    pw, ph = W - ml - mr, H - mt - mb
    steps = [math.log2(m["heads"]) for m in models]
    s0, s1 = min(steps), max(steps)

    def X(heads: int) -> float:
        return ml + 18 + (math.log2(heads) - s0) / (s1 - s0) * (pw - 36)

    def Y(v: float) -> float:
        return mt + (y1 - v) / (y1 - y0) * ph

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
        for k, r in enumerate(m["runs"]):
            dx = -8 - 8 * k
            parts.append(f'<circle cx="{x + dx:.1f}" cy="{Y(r["test_perplexity"]):.1f}" r="3.6" class="mha-sweep__dot"/>')
        parts.append(text(x, mt + ph + 18, str(m["heads"]), "mha-fig__label", anchor="middle", size=FONT))
        parts.append(text(x, mt + ph + 34, f"×{m['head_dim']}", "mha-fig__small", anchor="middle", size=FONT))
        seeds = ", ".join(f"seed {r['seed']} {r['test_perplexity']:.2f}" for r in m["runs"])
        desc.append(f"{m['heads']} head{'s' if m['heads'] > 1 else ''} of width {m['head_dim']}: mean "
                    f"{mean:.2f} ± {sd:.2f} ({seeds})")
    parts.append(text(ml + pw / 2, H - 6, "heads × head width (log scale)", "mha-fig__small",
                      anchor="middle", size=FONT))
    parts.append(f'<text transform="translate(13,{mt + ph / 2:g}) rotate(-90)" text-anchor="middle" '
                 f'class="mha-fig__small" font-size="{FONT}">test perplexity</text>')
    body = svg("head-sweep", W, H, "Test perplexity against the number of heads", "; ".join(desc) + ".",
               "".join(parts))
    seeds = len(data["seeds"])
    cap = (f"**Test perplexity per head count** (head width below; {data['d_model']} in all): a dot per seed "
           f"({seeds} each), the tick at the mean, the bar ± one standard deviation. Lower is better.")
    return body, cap
