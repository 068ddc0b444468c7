"""Page 5: parameters per part, the attention layer's cost as the window grows, the knock-out table."""

from __future__ import annotations

import html

from markupsafe import Markup

from .engine import _grid, _label, _mean_sd, _span, _table, ev, format_value, has, res_val, val


def _res_cell(path: str, fmt: str = ",") -> str:
    return f"<td>{_span('results', path, fmt, None, format_value(res_val(path), fmt))}</td>"


def parameter_table() -> Markup:
    """Parameters per part and model, with each part's share of the model's total."""
    models = list(val("protocol.models"))
    body = []
    for part, label in res_val("part_labels").items():
        cells = [f'<th scope="row">{html.escape(label)}</th>']
        for m in models:
            p = f"parameters.{m}.parts.{part}"
            if has(p, "results"):
                cells.append(
                    f"<td>{_span('results', p + '.count', ',', None, format_value(res_val(p + '.count'), ','))}"
                    f" <small>({_span('results', p + '.share', '.1%', None, format_value(res_val(p + '.share'), '.1%'))})</small></td>"
                )
            else:
                cells.append('<td class="is-masked">none</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    body.append(
        '<tr class="is-total"><th scope="row">total</th>'
        + "".join(_res_cell(f"parameters.{m}.total") for m in models)
        + "</tr>"
    )
    return _grid(
        "Parameters per part, biases included (share of the model's total in brackets)",
        ["part", *[_label(m) for m in models]],
        body,
    )


def attention_cost_table() -> Markup:
    """Multiply-adds of one attention layer as the window grows, per head and in total."""
    heads = res_val("attention_cost.heads")
    body = []
    for i, row in enumerate(res_val("attention_cost.rows")):
        p = f"attention_cost.rows.{i}"
        mark = ' class="is-model"' if i == res_val("attention_cost.model_row") else ""
        cells = [f'<th scope="row">{_span("results", p + ".window", "", None, str(row["window"]))}</th>']
        cells += [_res_cell(f"{p}.per_head.{m}") for m in heads]
        cells += [
            _res_cell(f"{p}.scores_and_messages_total"),
            _res_cell(f"{p}.projections"),
            _res_cell(f"{p}.attention_share", ".0%"),
        ]
        body.append(f"<tr{mark}>" + "".join(cells) + "</tr>")
    header = [
        "window <i>w</i>",
        *[f"per head, {html.escape(res_val(f'attention_cost.labels.{m}')).lower()}" for m in heads],
        "all heads",
        "projections",
        "attention's share",
    ]
    return _grid(
        "Multiply-adds of one attention layer when every slot is a receiver: scores and "
        "messages per head and over all heads, the four projections, and attention's share of "
        "the two (bold: the lesson's window)",
        header,
        body,
    )


def _ko(name: str, key: str, fmt: str, fn: str | None = None) -> Markup:
    return ev(f"heads.knockout.{name}.{key}", fmt, fn)


def _kind(kind: str) -> str:
    return html.escape(val(f"heads.kinds.{kind}"))


WEAK_LEAN = 1.5  # a head whose strongest kind gets less than 1.5x the even share is described as spreading evenly


def compare_link(prompt: str, model: str, head: int) -> str:
    """The compare page, opened on ``prompt`` with ``model``'s inspector and head ``head``'s switch in focus."""
    from urllib.parse import urlencode

    query = urlencode({"prompt": prompt, "inspect": model, "head": head})
    return html.escape(f"../../compare/?{query}")


def knockout_table() -> Markup:
    """The four-head model's test perplexity with heads switched off (rows: all, without k, only k, none)."""
    rows = []
    for name, row in val("heads.knockout").items():
        off = [i + 1 for i, v in enumerate(row["mask"]) if not v]
        on = [i + 1 for i, v in enumerate(row["mask"]) if v]
        if not off:
            what = "all four heads"
        elif not on:
            what = "no head (attention left out)"
        elif len(off) == 1:
            what = f"without head {off[0]}"
        else:
            what = f"only head {on[0]}"
        change = "—" if not off else _ko(name, "perplexity_change", "+.1%")
        changed = "—" if not off else _ko(name, "top_token_changed", ".1%")
        rows.append([what, _ko(name, "test_perplexity", ".2f"), change, changed])
    return _table(
        ["heads used", "test perplexity", "change", "top token changed"], rows, ["---", "---:", "---:", "---:"]
    )


def sweep_table() -> Markup:
    """The head-count sweep seed by seed: one row per head count, with the one-thread time per update."""
    sweep = val("head_sweep")
    timed = has("head_sweep.timing")
    rows = []
    for i, m in enumerate(sweep["models"]):
        p = f"head_sweep.models.{i}"
        # heads × width in one cell and a mean that never wraps: seven columns of Material's 5rem cells
        # would not fit the text column
        row = [
            f"{ev(f'{p}.heads')} × {ev(f'{p}.head_dim')}",
            *[ev(f"{p}.runs.{k}.test_perplexity", ".2f") for k in range(len(m["runs"]))],
            _mean_sd(p, "perplexity_mean", "perplexity_sd", ".2f"),
        ]
        if timed:
            row.append(ev(f"head_sweep.timing.per_update.{m['name']}.median_ms", ".0f"))
        rows.append(row)
    header = ["heads × width", *[f"seed {s}" for s in sweep["seeds"]], "mean ± sd"]
    header += ["ms per update"] if timed else []
    return _table(header, rows, ["---:"] * len(header), label="Test perplexity per head count and seed")


def _interval(p: str) -> str:
    """``+2.30 [+1.38, +3.22]`` of one paired comparison at path ``p``; a dash below two seeds."""
    if val(f"{p}.half_width") is None:
        return f"{ev(f'{p}.mean', '+.2f')} (one seed: no interval)" if val(f"{p}.n") else "—"
    # no break inside the brackets: "[+1.38," above "+3.22]" would read as two numbers
    return f"{ev(f'{p}.mean', '+.2f')}\u00a0[{ev(f'{p}.low', '+.2f')},\u00a0{ev(f'{p}.high', '+.2f')}]"


def paired_table(section: str) -> Markup:
    """Every model against the reference, paired by seed: the per-seed differences of test perplexity,
    and the mean difference with its 95 % interval over the source's seeds and over every seed run so far.

    ``section``: ``paired`` (the shipped models) or ``head_sweep.findings.paired`` (every head count).
    """
    ref = val(f"{section}.reference")
    source = list(val(f"{section}.source_seeds"))
    extra = [s for s in val(f"{section}.declared_seeds") if s not in source]
    rows = []
    for m in val(f"{section}.all"):
        p_all, p_src = f"{section}.all.{m}", f"{section}.source.{m}"
        seeds = list(val(f"{p_all}.seeds"))
        diffs = [ev(f"{p_all}.differences.{k}", "+.2f") for k, s in enumerate(seeds) if s in source]
        later = [ev(f"{p_all}.differences.{k}", "+.2f") for k, s in enumerate(seeds) if s not in source]
        cells = [
            html.escape(val(f"{section}.labels.{m}")),
            ", ".join(diffs) + ("; " + ", ".join(later) if later else ""),
        ]
        cells += [_interval(p_src), f"{_interval(p_all)} <small>(n\u00a0=\u00a0{ev(f'{p_all}.n')})</small>"]
        rows.append(cells)
    seeds_said = ", ".join(map(str, source)) + (f" (then {', '.join(map(str, extra))})" if extra else "")
    header = [
        "model",
        f"per seed: {seeds_said}",
        f"mean [95 % interval], {len(source)} source seeds",
        "mean [95 % interval], every seed run",
    ]
    return _table(
        header,
        rows,
        ["---", "---:", "---:", "---:"],
        label=f"Test perplexity minus {_possessive(val(f'{section}.labels.{ref}').lower())}, seed by seed",
    )


def _possessive(label: str) -> str:
    return label + ("'" if label.endswith("s") else "'s")
