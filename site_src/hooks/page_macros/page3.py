"""Page 3: the toy sentence's vocabulary and windows, and the same prefixes in the real vocabulary."""

from __future__ import annotations

import html

from markupsafe import Markup

from .engine import _cell, _grid, _span, toy_val


def toy_vocab_table() -> Markup:
    """The toy vocabulary: id and item, one column per id."""
    vocab = toy_val("vocab")
    ids = "".join(_cell("toy", f"vocab.{i}.id") for i in range(len(vocab)))
    items = "".join(_cell("toy", f"vocab.{i}.token") for i in range(len(vocab)))
    return _grid(
        "The toy vocabulary: four special items, then the sentence's tokens in sorted order",
        None,
        [f'<tr><th scope="row">id</th>{ids}</tr>', f'<tr><th scope="row">item</th>{items}</tr>'],
    )


def toy_window_table(first: int = 0, last: int | None = None) -> Markup:
    """Toy windows: row, the w input slots (token and id), the target (token and id)."""
    rows = toy_val("rows")
    w = toy_val("w")
    body = []
    for i in range(first, len(rows) if last is None else last):
        r = rows[i]
        cells = [f'<th scope="row">{_span("toy", f"rows.{i}.row", "", None, str(r["row"]))}</th>']
        for k in range(w):
            pad = "is-pad" if r["context_ids"][k] == 0 else ""
            cells.append(
                f'<td class="{pad}">{_span("toy", f"rows.{i}.context_tokens.{k}", "", None, r["context_tokens"][k])}'
                f"<br><small>id {_span('toy', f'rows.{i}.context_ids.{k}', '', None, str(r['context_ids'][k]))}</small></td>"
            )
        cells.append(
            f'<td class="is-target">{_span("toy", f"rows.{i}.target_token", "", None, r["target_token"])}'
            f"<br><small>id {_span('toy', f'rows.{i}.target_id', '', None, str(r['target_id']))}</small></td>"
        )
        body.append("<tr>" + "".join(cells) + "</tr>")
    header = ["row", *[f"slot {k}" for k in range(w)], "target y"]
    return _grid(f"Input windows x (token and id) and their targets, w = {w}", header, body)


def real_prefix_table() -> Markup:
    """The two Lily prefixes in the real vocabulary: PAD count, prefix ids, target id."""
    body = []
    for i, r in enumerate(toy_val("real.rows")):
        prefix = " ".join(
            f"{html.escape(t)}&nbsp;({_span('toy', f'real.rows.{i}.prefix_ids.{k}', '', None, str(pid))})"
            for k, (t, pid) in enumerate(zip(r["prefix"], r["prefix_ids"]))
        )
        body.append(
            f'<tr><th scope="row">{i}</th>'
            f"<td>{_span('toy', f'real.rows.{i}.pads', '', None, str(r['pads']))} × &lt;PAD&gt;&nbsp;(0)</td>"
            f'<td style="text-align:left">{prefix}</td>'
            f'<td class="is-target">{html.escape(r["target"])}&nbsp;'
            f"({_span('toy', f'real.rows.{i}.target_id', '', None, str(r['target_id']))})</td></tr>"
        )
    return _grid(
        "The same two prefixes in the real vocabulary", ["row", "left padding", "prefix (id)", "target y (id)"], body
    )
