"""The one-vs-several-head synthetic task (export/toy_task.py), drawn from wasm_assets/toy_task.json only.

Three figures: every task tried as a table (accuracy mean and sd per head
count, chance, verdict), the learning curves of the main task, and the
attention of the query on one held-out example for each head count. Each
drawn number carries a data attribute with the artefact's value, so
tests/test_toy_task.py checks that the page shows the artefact.
"""

from __future__ import annotations

from .common import FigureError, assets, load_json
from .svg import FONT, esc, line, rect, svg, text, y_title

MAIN = "pair"
HEAD_CLASS = {1: "mha-toy--h1", 2: "mha-toy--h2", 4: "mha-toy--h4"}
SHORT = {
    "pair": "pair: a and b",
    "mean": "mean: (a + b) / 2",
    "single": "single: a",
    "pair_keys_see_numbers": "pair, keys see numbers",
}
VERDICT = {
    "multi-head better": "several heads better",
    "one head better": "one head better",
    "no clear gap": "no clear gap",
}


def _data() -> dict:
    return load_json(assets().toy_task.name)


def _task(name: str) -> dict:
    for t in _data()["tasks"]:
        if t["task"] == name:
            return t
    raise FigureError(f"{assets().toy_task.name} has no task {name!r}; rerun `python -m export toy_task`")


def _pc(x: float) -> str:
    return f"{100 * x:.1f} %"


def _heads_label(h: int) -> str:
    return "1 head" if h == 1 else f"{h} heads"


def _points(x: float) -> str:
    return f"{100 * x:+.0f}".replace("-", "\u2212")


def gap_words(gap: dict) -> str:
    """A gap (export/toy_task.py's ``head_gap``) in words, one branch per verdict: several heads minus one head
    in share solved, paired by seed, its mean and its 95 % interval."""
    said = (
        f"{_heads_label(gap['multi_heads'])} minus one head, seed by seed over {gap['n']} seeds: "
        f"mean {_points(gap['accuracy_difference'])} points"
    )
    if gap["low"] is None:
        return f"{said}, too few seeds for an interval: no clear gap"
    interval = f"95 % interval {_points(gap['low'])} to {_points(gap['high'])}"
    if gap["verdict"] == "multi-head better":
        return f"{said}, {interval}, above zero: a gap"
    if gap["verdict"] == "one head better":
        return f"{said}, {interval}, below zero: a gap the other way"
    return f"{said}, but the {interval} contains zero: no clear gap"


def figure_toy_summary() -> tuple[str, str]:
    data = _data()
    cfg = data["config"]
    heads = cfg["heads"]
    head = "".join(f'<th scope="col">{_heads_label(h)}<br>(width {cfg["d_model"] // h})</th>' for h in heads)
    rows = []
    for t in data["tasks"]:
        cells = []
        for h in heads:
            r = t["by_heads"][str(h)]
            cells.append(
                f'<td data-heads="{h}" data-accuracy-mean="{r["accuracy_mean"]!r}" '
                f'data-accuracy-sd="{r["accuracy_sd"]!r}">{_pc(r["accuracy_mean"])} '
                f"± {100 * r['accuracy_sd']:.1f}</td>"
            )
        verdict = VERDICT[t["gap"]["verdict"]] if t["gap"] else "–"
        rows.append(
            f'<tr data-task="{esc(t["task"])}"><th scope="row" title="{esc(t["description"])}">'
            f"{esc(SHORT.get(t['task'], t['task']))}</th>"
            f'<td data-chance="{t["chance"]!r}">{_pc(t["chance"])}</td>{"".join(cells)}'
            f'<td>{esc(t["expected"])}</td><td data-verdict="{esc(t["gap"]["verdict"] if t["gap"] else "")}">'
            f"{esc(verdict)}</td></tr>"
        )
    table = (
        f'<table class="mha-toy__table"><thead><tr><th scope="col">task</th>'
        f'<th scope="col">chance</th>{head}<th scope="col">expected</th>'
        f'<th scope="col">result</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )
    main = _task(MAIN)
    one, best = main["by_heads"]["1"], main["by_heads"][str(main["gap"]["multi_heads"])]
    cap = (
        f"**Every task of the stage, the same budget for every head count.** Share of held-out sequences "
        f"solved, mean ± sd (percentage points) over {len(cfg['seeds'])} seeds, of attention models with the "
        f"same width ({cfg['d_model']}) and the same {one['parameters']:,} parameters, split into 1, 2 or 4 "
        f"heads; each trained {cfg['steps']:,} updates with the better of {len(cfg['lr_grid'])} learning rates "
        f"(chosen on a separate seed). On the pair task one head solves {_pc(one['accuracy_mean'])} and "
        f"{_heads_label(best['heads'])} {_pc(best['accuracy_mean'])}; {gap_words(main['gap'])}. "
        '"Result" calls a gap only when the 95 % interval of the per-seed differences excludes zero: the '
        f"rule of page 5, on the share solved (over {main['gap']['n']} seeds a t-interval's ends can pass ±100 points)."
    )
    return (
        f'<div class="mha-toy__scroll" tabindex="0" role="region" aria-label="Every task tried, '
        f'by head count (scrolls sideways on a narrow screen)">{table}</div>',
        cap,
    )


def figure_toy_accuracy() -> tuple[str, str]:
    """The main task's result as a dot plot: each seed's final share solved per head count, the mean
    as a bar beside the dots (never under them), and chance as a line."""
    data = _data()
    t = _task(MAIN)
    heads = data["config"]["heads"]
    W, Hh = 400, 236
    ml, mr, mt, mb = 44, 12, 14, 44
    pw, ph = W - ml - mr, Hh - mt - mb
    Y = lambda a: mt + (1 - a) * ph
    col = pw / len(heads)
    parts = [rect(ml, mt, pw, ph, "mha-fig__plot")]
    for a in (0, 0.25, 0.5, 0.75, 1):
        parts.append(line(ml, Y(a), ml + pw, Y(a), "mha-fig__grid"))
        parts.append(text(ml - 4, Y(a) + 4, f"{100 * a:.0f}%", "mha-fig__small", anchor="end", size=FONT))
    parts.append(line(ml, Y(t["chance"]), ml + pw, Y(t["chance"]), "mha-toy__chance"))
    parts.append(
        text(ml + pw - 4, Y(t["chance"]) - 5, f"chance {_pc(t['chance'])}", "mha-fig__small", anchor="end", size=FONT)
    )
    desc = []
    for k, h in enumerate(heads):
        r = t["by_heads"][str(h)]
        cx = ml + col * (k + 0.5)
        mean = r["accuracy_mean"]
        parts.append(
            f'<line x1="{cx + 4:g}" y1="{Y(mean):.1f}" x2="{cx + 30:g}" y2="{Y(mean):.1f}" '
            f'class="mha-toy__mean {HEAD_CLASS.get(h, "")}" data-heads="{h}" data-mean="{mean!r}"/>'
        )
        for j, run in enumerate(r["runs"]):
            x = cx - 8 - 9 * j
            parts.append(
                f'<circle cx="{x:g}" cy="{Y(run["accuracy"]):.1f}" r="4.5" '
                f'class="mha-toy__dot {HEAD_CLASS.get(h, "")}" data-heads="{h}" data-seed="{run["seed"]}" '
                f'data-accuracy="{run["accuracy"]!r}"><title>{_heads_label(h)}, seed {run["seed"]}: '
                f"{_pc(run['accuracy'])}</title></circle>"
            )
        parts.append(text(cx, mt + ph + 17, _heads_label(h), "mha-fig__label", anchor="middle", size=FONT))
        parts.append(text(cx, mt + ph + 34, f"mean {_pc(mean)}", "mha-fig__small", anchor="middle", size=FONT))
        desc.append(
            f"{_heads_label(h)}: mean {_pc(mean)}, seeds "
            + ", ".join(f"{run['seed']} {_pc(run['accuracy'])}" for run in r["runs"])
        )
    body = svg(
        "toy-accuracy",
        W,
        Hh,
        "Share of held-out sequences solved on the pair task, by head count",
        "; ".join(desc) + f"; chance {_pc(t['chance'])}.",
        "".join(parts),
    )
    cfg = data["config"]
    one = t["by_heads"]["1"]
    cap = (
        f"**A task one head cannot learn.** Share of {cfg['heldout']:,} held-out sequences solved after "
        f"{cfg['steps']:,} updates (dots: seeds; bars: means), with the same width and {one['parameters']:,} "
        f"parameters for every head count. {gap_words(t['gap'])}."
    )
    return body, cap


def figure_toy_curves() -> tuple[str, str]:
    data = _data()
    t = _task(MAIN)
    heads = data["config"]["heads"]
    steps = data["config"]["steps"]
    W, Hh = 404, 260
    # the right margin holds the chance line's label, clear of the curves and of the edge; the top one the
    # replay's cursor label
    ml, mr, mt, mb = 56, 50, 44, 38
    pw, ph = W - ml - mr, Hh - mt - mb
    X = lambda s: ml + s / steps * pw
    Y = lambda a: mt + (1 - a) * ph
    parts = [rect(ml, mt, pw, ph, "mha-fig__plot")]
    for a in (0, 0.25, 0.5, 0.75, 1):
        parts.append(line(ml, Y(a), ml + pw, Y(a), "mha-fig__grid"))
        parts.append(text(ml - 4, Y(a) + 4, f"{100 * a:.0f}%", "mha-fig__small", anchor="end", size=FONT))
    for s in range(0, steps + 1, max(1, steps // 4)):
        parts.append(text(X(s), mt + ph + 15, f"{s:,}", "mha-fig__small", anchor="middle", size=FONT))
    parts.append(text(ml + pw / 2, Hh - 6, "update", "mha-fig__small", anchor="middle", size=FONT))
    parts.append(y_title(mt + ph / 2, "held-out share solved"))
    parts.append(line(ml, Y(t["chance"]), ml + pw, Y(t["chance"]), "mha-toy__chance"))
    cx, cy = ml + pw + 4, Y(t["chance"])
    parts.append(
        f'<text x="{cx:g}" y="{cy - 10:g}" class="mha-fig__small" font-size="{FONT:g}">chance'
        f'<tspan x="{cx:g}" dy="{FONT:g}">{esc(_pc(t["chance"]))}</tspan></text>'
    )
    desc = []
    for h in heads:
        r = t["by_heads"][str(h)]
        for run in r["runs"]:
            d = " ".join(f"{'M' if k == 0 else 'L'}{X(s):.1f},{Y(a):.1f}" for k, (s, a, _) in enumerate(run["curve"]))
            parts.append(
                f'<path d="{d}" class="mha-toy__curve {HEAD_CLASS.get(h, "")}" data-heads="{h}" '
                f'data-seed="{run["seed"]}" data-final="{run["accuracy"]!r}" '
                f'data-points="{" ".join(f"{s}:{a}" for s, a, _ in run["curve"])}"/>'
            )
        desc.append(
            f"{_heads_label(h)}: final share solved {', '.join(_pc(run['accuracy']) for run in r['runs'])} "
            f"(seeds {', '.join(str(run['seed']) for run in r['runs'])})"
        )
    for k, h in enumerate(heads):
        lx = ml + k * 110
        parts.append(
            line(lx, 14, lx + 24, 14, f"mha-toy__curve {HEAD_CLASS.get(h, '')}").replace(
                "<line ", f'<line data-key-heads="{h}" ', 1
            )
        )
        parts.append(text(lx + 30, 18, _heads_label(h), "mha-fig__label", size=FONT))
    parts.append(
        f'<g class="mha-toy__replay" data-steps="{steps}" data-x0="{ml}" data-x1="{ml + pw}" '
        f'data-y0="{mt}" data-y1="{mt + ph}"></g>'
    )
    body = svg(
        "toy-curves",
        W,
        Hh,
        "Learning curves on the pair task for 1, 2 and 4 heads",
        "; ".join(desc) + ".",
        "".join(parts),
    )
    one = t["by_heads"]["1"]
    solved_by = {h: sum(run["accuracy"] >= 0.9 for run in t["by_heads"][str(h)]["runs"]) for h in heads}
    n = len(one["runs"])
    counts = "; ".join(f"{_heads_label(h)}: {solved_by[h]} of {n}" for h in heads)
    cap = (
        f"**Recorded learning curves** on the same task, one line per seed and head count (grey: chance). "
        f"Seeds above 90 % by update {steps:,}: {counts}."
    )
    return body, cap


def _slot_label(tag: str, number) -> tuple[str, str]:
    if tag == "?":
        return "?", ""
    return tag, f"{number:.2f}".lstrip("0") if number < 1 else f"{number:g}"


def _answer(x) -> str:
    return "(" + ", ".join(f"{v:.2f}" for v in x) + ")" if isinstance(x, list) else str(x)


def figure_toy_attention() -> tuple[str, str]:
    t = _task(MAIN)
    heads = [1, t["gap"]["multi_heads"]]  # one head against the head count that did best
    example = t["by_heads"]["1"]["examples"][0]
    labels = [_slot_label(tag, v) for tag, v in zip(example["tags"], example["numbers"])]
    n = len(labels)
    cw, rh, left, top = 25, 24, 86, 44
    W = left + cw * n + 6
    Hh = top + rh * (sum(heads) + len(heads) - 1) + 6
    parts = []
    for j, (tag, num) in enumerate(labels):
        strong = tag in ("A", "B")
        cls = "mha-fig__label" if strong else "mha-fig__small"
        parts.append(
            text(
                left + j * cw + cw / 2, top - 22, tag, cls, anchor="middle", size=FONT, weight="700" if strong else None
            )
        )
        parts.append(
            text(
                left + j * cw + cw / 2,
                top - 8,
                num,
                cls,
                anchor="middle",
                size=FONT - 3.5,
                weight="700" if strong else None,
            )
        )
    desc, y = [], top
    for h in heads:
        ex = t["by_heads"][str(h)]["examples"][0]
        for k, row in enumerate(ex["attention"]):
            name = "one head" if h == 1 else f"head {k + 1} of {h}"
            parts.append(text(left - 6, y + rh / 2 + 4, name, "mha-fig__label", anchor="end", size=FONT - 1.5))
            for j, w in enumerate(row):
                x = left + j * cw
                parts.append(rect(x + 1, y + 1, cw - 2, rh - 2, "mha-fig__box"))
                parts.append(
                    f'<rect x="{x + 1:g}" y="{y + 1:g}" width="{cw - 2:g}" height="{rh - 2:g}" '
                    f'class="h{k} mha-toy__cell" fill-opacity="{min(1.0, w) * 0.9:.3f}" '
                    f'data-heads="{h}" data-head="{k + 1}" data-slot="{j}" data-weight="{w!r}"/>'
                )
                if w >= 0.1:
                    parts.append(
                        text(
                            x + cw / 2,
                            y + rh / 2 + 4,
                            f"{100 * w:.0f}",
                            "mha-toy__pct",
                            anchor="middle",
                            size=FONT - 3.5,
                        )
                    )
            top_slots = sorted(range(n), key=lambda j: -row[j])[:2]
            desc.append(
                f"{name}: most weight on slot {top_slots[0] + 1}, {labels[top_slots[0]][0]} "
                f"({100 * row[top_slots[0]]:.0f}%), then slot {top_slots[1] + 1}, "
                f"{labels[top_slots[1]][0]} ({100 * row[top_slots[1]]:.0f}%)"
            )
            y += rh
        desc[-1] += f"; this model answers {_answer(ex['predicted'])}"
        y += rh
    body = svg(
        "toy-attention",
        W,
        Hh,
        "Where the query looks: one head against several on one held-out sequence",
        f"Slots: {', '.join(f'{a} {b}'.strip() for a, b in labels)}. The answer is "
        f"{_answer(example['target'])}. " + "; ".join(desc) + ".",
        "".join(parts),
    )
    answers = {h: t["by_heads"][str(h)]["examples"][0]["predicted"] for h in heads}
    multi = heads[1]
    one_row = t["by_heads"]["1"]["examples"][0]["attention"][0]
    on_ab = sum(w for w, tag in zip(one_row, example["tags"]) if tag in ("A", "B"))
    cap = (
        f"**Where the query looks**, on one held-out sequence: the answer is A's and B's numbers, "
        f"{_answer(example['target'])}; D slots are distractors; cells give the percentage of each head's "
        f"attention (seed {t['by_heads']['1']['runs'][0]['seed']} models). The one-head model answers "
        f"{_answer(answers[1])}, with {100 * on_ab:.0f} % of its weight on A and B together: whatever its weights, "
        "its message holds one blend of numbers, so it cannot report two. "
        f"The {multi}-head model answers {_answer(answers[multi])}: its heads give A and B their own weights."
    )
    return body, cap
