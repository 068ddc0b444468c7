"""Page 5: what each head's knock-out costs at each training snapshot, drawn from wasm_assets/head_growth.json only.

The snapshots come from a rerun of the shipped four-head seed-11 training
(export/head_growth.py); the caption gives the rerun's test perplexity beside
the shipped run's. Page 5's slider (site_src/js/lesson/head_growth.js) marks
the snapshot it shows through the bands' ``data-snapshot``.
"""

from __future__ import annotations

from .common import assets, load_json
from .svg import FONT, line, rect, svg, text, y_title


def figure_head_growth() -> tuple[str, str]:
    data = load_json(assets().head_growth.name)
    snaps = data["snapshots"]
    heads = len(snaps[-1]["atlas"])
    changes = [[s["knockout"][f"without_{h + 1}"]["perplexity_change"] for s in snaps] for h in range(heads)]
    top = max(max(c) for c in changes)
    low = min(0.0, min(min(c) for c in changes))
    W, Hh = 400, 250
    ml, mr, mt, mb = 58, 14, 34, 40
    pw, ph = W - ml - mr, Hh - mt - mb
    step = pw / (len(snaps) - 1)
    X = lambda i: ml + i * step
    Y = lambda v: mt + (top - v) / (top - low) * ph
    parts = []
    for i, s in enumerate(snaps):
        parts.append(
            rect(
                X(i) - step / 2 if i else X(i),
                mt,
                step if 0 < i < len(snaps) - 1 else step / 2,
                ph,
                "mha-hg__band",
                extra=f' data-snapshot="{i}"',
            )
        )
        edge = "start" if i == 0 else "end" if i == len(snaps) - 1 else "middle"  # the end labels stay inside
        parts.append(text(X(i), mt + ph + 15, f"{s['update']:,}", "mha-fig__small", anchor=edge, size=FONT))
    parts.append(rect(ml, mt, pw, ph, "mha-fig__plot"))
    tick = 0.05 if top - low < 0.3 else 0.1 if top - low < 0.6 else 0.25
    v = 0.0
    while v <= top + 1e-9:
        parts.append(line(ml, Y(v), ml + pw, Y(v), "mha-fig__grid"))
        parts.append(text(ml - 4, Y(v) + 4, f"+{100 * v:.0f}%", "mha-fig__small", anchor="end", size=FONT))
        v += tick
    parts.append(
        text(ml + pw / 2, Hh - 6, "update (snapshots, log-spaced)", "mha-fig__small", anchor="middle", size=FONT)
    )
    parts.append(y_title(mt + ph / 2, "perplexity rise"))
    desc = []
    for h in range(heads):
        d = " ".join(f"{'M' if i == 0 else 'L'}{X(i):.1f},{Y(c):.1f}" for i, c in enumerate(changes[h]))
        parts.append(f'<path d="{d}" class="mha-hg__line h{h}" data-head="{h + 1}"/>')
        for i, c in enumerate(changes[h]):
            parts.append(
                f'<circle cx="{X(i):.1f}" cy="{Y(c):.1f}" r="2.6" class="h{h}" data-head="{h + 1}" '
                f'data-snapshot="{i}" data-change="{c!r}"/>'
            )
        desc.append(
            f"head {h + 1}: "
            + ", ".join(f"{100 * c:+.1f}% at update {s['update']:,}" for c, s in zip(changes[h], snaps))
        )
    for h in range(heads):
        lx = ml + h * 88
        parts.append(line(lx, 14, lx + 22, 14, f"mha-hg__line h{h}"))
        parts.append(text(lx + 27, 18, f"head {h + 1}", f"mha-fig__label h{h}-text", size=FONT))
    body = svg(
        "head-growth",
        W,
        Hh,
        "How much the test perplexity rises without each head, at each training snapshot",
        "; ".join(desc) + ".",
        "".join(parts),
    )
    rerun, shipped = data["rerun"], data.get("shipped")
    same = f" (the shipped run: {shipped['test_perplexity']:.2f})" if shipped else ""
    cap = (
        f"**When each head became important**: perplexity on the first {data['subset']['windows']:,} test "
        "windows with one head off, against the full model at the same snapshot. The snapshots come from a "
        f"**rerun** of the four-head training (seed {data['seed']}), whose chosen checkpoint scores "
        f"{rerun['test_perplexity']:.2f} on the whole test split{same}."
    )
    return body, cap
