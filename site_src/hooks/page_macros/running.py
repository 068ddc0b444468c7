"""The running sentence read by the four-head model: the home page's first screen and page 5's per-head bars.

Both draw ``page_data.json``'s ``running`` part (``export/lesson/running_sentence.py``,
run by ``python -m export pagedata``): every head's weights from the last word
to the earlier words, the model's guess, and that guess's probability with each
head switched off. The markup is HTML (a table and bars), so the live widget of
the home page (``site_src/js/home/first_screen.js``) redraws the same thing for
the learner's own sentence, and the page-5 bars match the compare inspector's
(``site_src/js/compare/head_effects.js``). Head colours are the palette's CSS
variables (``wasm_assets/palette.css``); every number is an evidence span.
"""

from __future__ import annotations

import html
import json

from markupsafe import Markup

import export.artefacts as artefacts

from .engine import DATA, MacroError, _span, format_value, lookup

# What the live mode downloads beside the page, on the WebAssembly build of onnxruntime
# (site_src/js/runtime/ort.js: the entry module; ort_engine.js: its engine's glue and binary).
ORT_WASM_FILES = ("ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")


def _run(path: str, fmt: str = "") -> Markup:
    value = lookup(DATA.get("page_data"), f"running.{path}", "page_data")
    return _span("page_data", f"running.{path}", fmt, None, format_value(value, fmt))


def _word(token: str) -> str:
    """A token as the learner reads it: the story-start marker in words."""
    return "start" if token == "<BOS>" else token


def live_download_bytes() -> int:
    """The bytes the live mode fetches: the model, vocabulary and manifest, and onnxruntime's WebAssembly build."""
    art = artefacts.Artefacts()
    running = lookup(DATA.get("page_data"), "running", "page_data")
    manifest = json.loads(art.manifest.read_text(encoding="utf-8"))
    model = next((m for m in manifest["models"] if m["name"] == running["model"]), None)
    if model is None:
        raise MacroError(f"the manifest has no model {running['model']!r}: rerun `python -m export pagedata`")
    dist = artefacts.PROJECT_ROOT / "node_modules" / "onnxruntime-web" / "dist"
    missing = [f for f in ORT_WASM_FILES if not (dist / f).is_file()]
    if missing:
        raise MacroError(f"node_modules lacks onnxruntime-web's {', '.join(missing)}: run `npm ci`")
    return (
        model["bytes"]
        + art.vocab.stat().st_size
        + art.manifest.stat().st_size
        + sum((dist / f).stat().st_size for f in ORT_WASM_FILES)
    )


def _megabytes(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def live_download() -> str:
    """The live mode's download in megabytes, as the home page's button says it (for its browser note)."""
    return _megabytes(live_download_bytes())


def weights_table() -> str:
    """Rows: heads; columns: the sources; each cell a bar in the head's colour and the weight in percent."""
    run = lookup(DATA.get("page_data"), "running", "page_data")
    tokens, weights = run["tokens"], run["weights"]
    last = len(tokens) - 1
    receiver = ' class="mha-first__receiver"'
    head = "".join(
        f'<th scope="col"{receiver if j == last else ""}>{html.escape(_word(t))}</th>' for j, t in enumerate(tokens)
    )
    rows = []
    for h, row in enumerate(weights):
        cells = "".join(
            f'<td><span class="mha-first__bar" style="--w:{w:.4f}" aria-hidden="true"></span>'
            f'<span class="mha-first__pct">{_run(f"weights.{h}.{j}", ".0%")}</span></td>'
            for j, w in enumerate(row)
        )
        rows.append(
            f'<tr style="--head:var(--mha-head-{h + 1})"><th scope="row">'
            f'<span class="mha-first__swatch" aria-hidden="true"></span>head {h + 1}</th>{cells}</tr>'
        )
    caption = (
        f"Each head's weights from the last word, “{html.escape(tokens[last])}”, to every word of "
        "the sentence (start is the story-start marker); each row adds up to 100 %."
    )
    return (
        f'<div class="mha-first__scroll" tabindex="0" role="region" aria-label="The four heads\' weights">'
        f'<table class="mha-first__table"><caption class="mha-sr">{caption}</caption>'
        f"<thead><tr><td></td>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def first_screen() -> Markup:
    """The home page's first figure: the four-head model reading the running sentence, then a button to go live."""
    run = lookup(DATA.get("page_data"), "running", "page_data")
    size = live_download_bytes()
    changed = [w for w in run["without"] if w["changed"]]
    off = ""
    if changed:
        k = run["without"].index(changed[0])
        off = f" Switch head {changed[0]['head']} off and it guesses “{_run(f'without.{k}.guess')}” instead."
    data = {"sentence": run["sentence"], "model": run["model"], "download-bytes": str(size)}
    attrs = " ".join(f'data-{k}="{html.escape(v, quote=True)}"' for k, v in data.items())
    return Markup(
        f'<figure class="mha-first" id="fig-first-screen" data-mha-widget="first_screen" {attrs}>'
        f'<div class="mha-first__view">'
        f'<p class="mha-first__guess">The trained four-head model reads “{_run("sentence")}”. '
        f'Its guess for the next word: <strong class="mha-first__word">{_run("guess")}</strong> '
        f"({_run('p_guess', '.1%')}).{off}</p>"
        f"{weights_table()}</div>"
        f"<figcaption>Four heads at the same last word, each with its own weights over the sentence "
        f"(“start” marks the beginning of a story). The pipeline ran the shipped model: nothing was "
        f"downloaded to draw this.</figcaption>"
        f'<p class="mha-first__go"><button type="button" class="md-button md-button--primary mha-first__live" '
        f"disabled>Run it live: type a sentence, switch heads off (downloads {_megabytes(size)})</button></p>"
        f"</figure>"
    )


def head_effect_bars() -> Markup:
    """Page 5: the probability of the model's guess with all heads and with each head switched off."""
    run = lookup(DATA.get("page_data"), "running", "page_data")
    ps = [run["p_guess"], *(w["p_guess"] for w in run["without"])]
    top = max(ps) * 1.1  # the longest bar takes most of the row: 20 % must not look like a sliver
    rows = [("all heads", "", "p_guess", run["p_guess"])]
    rows += [
        (f"without head {w['head']}", f"--head:var(--mha-head-{w['head']})", f"without.{k}.p_guess", w["p_guess"])
        for k, w in enumerate(run["without"])
    ]
    items = "".join(
        f'<li style="{style}"><span class="mha-effect__label">{label}</span>'
        f'<span class="mha-effect__track" aria-hidden="true"><span class="mha-effect__bar" '
        f'style="width:{100 * p / top:.1f}%"></span></span>'
        f'<span class="mha-effect__p">{_run(path, ".1%")}</span></li>'
        for label, style, path, p in rows
    )
    notes = "; ".join(
        f"without head {w['head']} it guesses “{_run(f'without.{k}.guess')}” instead"
        for k, w in enumerate(run["without"])
        if w["changed"]
    )
    word = html.escape(run["guess"])
    return Markup(
        f'<figure class="mha-effect" id="fig-head-effects">'
        f'<p class="mha-effect__title">Probability of “{word}” after “{_run("sentence")}”</p>'
        f'<ol class="mha-effect__bars">{items}</ol>'
        f"<figcaption>The shipped four-head model's probability for its guess “{word}”, with all heads and with "
        f"each head switched off alone (nothing retrained); one scale for every bar."
        f"{' W' + notes[1:] + '.' if notes else ''}</figcaption>"
        f"</figure>"
    )
