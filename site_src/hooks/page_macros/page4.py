"""Page 4: the walkthrough's matrices, its mask, the final receiver's weights and the top next tokens."""

from __future__ import annotations

import html
import re

from markupsafe import Markup

from .engine import DATA, _grid, _span, format_value, lookup, wt_val


def _wt_slot_labels(b: int) -> list[str]:
    row = wt_val(f"rows.{b}")
    return [f"{s} {html.escape(t)}" for s, t in zip(wt_val("shown_slots"), row["slot_tokens"])]


def wt_matrix(
    path: str, caption: str, rows: str = "slots", cols: str = "coords", fmt: str = ".3f", b: int | None = None
) -> Markup:
    """A 2-D slice of walkthrough.json as a table; ``rows``/``cols``: slots, heads or coords; null = masked."""
    data = wt_val(path)
    if b is None:
        m = re.match(r"rows\.(\d+)\.", path)
        b = int(m.group(1)) if m else 0

    def labels(kind: str, n: int) -> list[str]:
        if kind == "slots":
            return [f"slot {x}" for x in _wt_slot_labels(b)]
        if kind == "heads":
            return [f"head {i + 1}" for i in range(n)]
        return [f"c{i}" for i in range(n)]

    row_labels = labels(rows, len(data))
    col_labels = labels(cols, len(data[0]))
    body = []
    for i, line in enumerate(data):
        cells = [f'<th scope="row">{row_labels[i]}</th>']
        for j, v in enumerate(line):
            if v is None:
                cells.append('<td class="is-masked">—</td>')
            else:
                cells.append(f"<td>{_span('walkthrough', f'{path}.{i}.{j}', fmt, None, format_value(v, fmt))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return _grid(caption, ["", *col_labels], body)


def wt_mask(b: int) -> Markup:
    """The mask picture for example ``b``: receivers (rows) by sources (columns) over the shown slots."""
    mask = wt_val(f"rows.{b}.mask")
    labels = _wt_slot_labels(b)
    body = []
    for i, line in enumerate(mask):
        cells = [f'<th scope="row">{labels[i]}</th>']
        for blocked in line:
            cells.append('<td class="is-masked">blocked</td>' if blocked else "<td>read</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return _grid("Which source (column) each receiver (row) may read", ["receiver / source", *labels], body)


def wt_final_weights(b: int) -> Markup:
    """Attention weights of the final receiver, per head, over the shown slots."""
    labels = _wt_slot_labels(b)
    A = wt_val(f"rows.{b}.A")
    mask = wt_val(f"rows.{b}.mask")
    last = len(labels) - 1
    body = []
    for h, head in enumerate(A):
        cells = [f'<th scope="row">head {h + 1}</th>']
        for j, v in enumerate(head[last]):
            cells.append(
                '<td class="is-masked">—</td>'
                if mask[last][j]
                else f"<td>{_span('walkthrough', f'rows.{b}.A.{h}.{last}.{j}', '.3f', None, format_value(v, '.3f'))}</td>"
            )
        body.append("<tr>" + "".join(cells) + "</tr>")
    return _grid("Weights of the final receiver's query (rows: heads; columns: source slots)", ["", *labels], body)


def top_table(path: str, caption: str, src: str = "walkthrough") -> Markup:
    """The most probable next tokens: rank, token, id and probability."""
    items = lookup(DATA.get(src), path, src)
    body = []
    for i, item in enumerate(items):
        body.append(
            f'<tr><th scope="row">{i + 1}</th>'
            f'<td style="text-align:left">{_span(src, f"{path}.{i}.token", "", None, item["token"])}</td>'
            f"<td>{_span(src, f'{path}.{i}.id', '', None, str(item['id']))}</td>"
            f"<td>{_span(src, f'{path}.{i}.p', '.4f', None, format_value(item['p'], '.4f'))}</td></tr>"
        )
    return _grid(caption, ["rank", "token", "id", "probability"], body)
