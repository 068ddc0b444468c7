"""The microgpt page: where its heads matter, from ``wasm_assets/microgpt_heads.json`` (export/microgpt/head_effect.py)."""

from __future__ import annotations

from markupsafe import Markup

from .engine import _grid, _span, format_value, mh, mh_val


def loss_table() -> Markup:
    """Each model and setting with its loss over the whole names list."""
    n_head = len(mh_val("lean"))
    rows = [
        (f"{n_head} heads, all on", "loss.all_on"),
        *((f"{n_head} heads, head {h} off", f"loss.head{h}_off") for h in range(1, n_head + 1)),
        (f"{n_head} heads, every head off", "loss.all_off"),
        ("the one-head twin", "loss.one_head_twin"),
        ("the one-head twin, its head off", "loss.one_head_twin_off"),
    ]
    body = [f'<tr><th scope="row">{label}</th><td>{mh(path, ".4f")}</td></tr>' for label, path in rows]
    return _grid(
        "Mean loss per prediction over the whole names list (nats; lower is better)", ["microgpt", "loss"], body
    )


def lean_list() -> Markup:
    """One line per head: the letters whose next-letter predictions move most when it is off."""
    items = []
    for i, head in enumerate(mh_val("lean")):
        letters = ", ".join(
            f"after <b>{x['letter']}</b> {mh(f'lean.{i}.letters.{j}.effect', '.1%')}"
            for j, x in enumerate(head["letters"])
        )
        items.append(f"<li>head {head['head']}: {letters}</li>")
    return Markup(f'<ul class="mgpt-lean">{"".join(items)}</ul>')


def top_example(setting: str, index: int = 0) -> Markup:
    """'after “athanasiu” (athanasius), ⏎ 45% becomes n 20%': one listed prefix in words."""
    path = f"top.{setting}.{index}"
    entry = mh_val(path)
    sym = lambda s: "⏎" if s == "end" else s  # noqa: E731
    return Markup(
        f"after “{entry['prefix']}” the top guess {sym(entry['top_before'])} "
        f"({_span('microgpt_heads', path + '.p_before', '.0%', None, format_value(entry['p_before'], '.0%'))}) "
        f"becomes {sym(entry['top_after'])} "
        f"({_span('microgpt_heads', path + '.p_after', '.0%', None, format_value(entry['p_after'], '.0%'))})"
    )
