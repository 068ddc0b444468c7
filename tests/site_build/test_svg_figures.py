"""The lesson's generated figures (site_src/hooks/figures.py): present, described, and drawn from the files.

Build-level checks on the HTML; ``test_lesson_svg_browser.py`` looks at them in Chromium.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = {  # built page -> figures it must show
    "lesson/1-why-more-heads/index.html": {
        "coat-query",
        "fisherman-queries",
        "coat-heads",
        "toy-accuracy",
        "toy-curves",
    },
    "lesson/2-multihead-operation/index.html": {"operation-flow"},
    "lesson/4-model-training-generation/index.html": {"model-map", "mask"},
    "lesson/5-results/index.html": {"head-sweep", "head-growth"},
    # the fine print's figures: page 3's tokenizers, page 5's traces and parameters
    "lesson/how-measured/index.html": {"tokenizers", "traces-zoom", "parameters", "toy-attention", "toy-summary"},
}
# Attribute order is free: a figure inside a door (<details markdown>) is re-serialised by md_in_html.
FIGURE = re.compile(
    r'<figure class="mha-fig" (?=[^>]*\bdata-fig="(?P<name>[\w-]+)")(?=[^>]*\bid="fig-(?P=name)")[^>]*>'
    r"(?P<body>.*?)</figure>",
    re.S,
)


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def figures(page_html: str) -> dict[str, dict]:
    out = {}
    for m in FIGURE.finditer(page_html):
        body = m.group("body")
        svg = re.search(r"<svg [^>]*>", body)
        title = re.search(r"<title id=\"([^\"]+)\">(.*?)</title>", body, re.S)
        desc = re.search(r"<desc id=\"([^\"]+)\">(.*?)</desc>", body, re.S)
        cap = re.search(r"<figcaption>(.*?)</figcaption>", body, re.S)
        out[m.group("name")] = {
            "svg": svg.group(0) if svg else "",
            "body": body,
            "title": (title.group(1), html.unescape(title.group(2))) if title else None,
            "desc": (desc.group(1), html.unescape(desc.group(2))) if desc else None,
            "caption": _text(cap.group(1)).strip() if cap else "",
        }
    return out


@pytest.fixture(scope="module")
def pages(built_site):
    return {p: (built_site / p).read_text(encoding="utf-8") for p in EXPECTED}


@pytest.fixture(scope="module")
def figs(pages):
    return {p: figures(h) for p, h in pages.items()}


def _json(name):
    return json.loads((ROOT / "wasm_assets" / name).read_text())


@pytest.mark.parametrize("page", EXPECTED)
def test_each_page_has_its_described_figures(figs, page):
    found = figs[page]
    assert EXPECTED[page] <= set(found), f"{page} lacks {EXPECTED[page] - set(found)}"
    for name, f in found.items():
        if not f["svg"]:  # a figure that is a table (page 5's every-task summary) is read as a table
            assert "<table" in f["body"] and len(f["caption"]) > 80, name
            continue
        links = "xlink:href=" in f["body"]
        role = 'role="group"' if links else 'role="img"'  # an img's inside is hidden from screen readers
        assert role in f["svg"] and f["title"] and f["desc"], f"{name}: no {role}, title or desc"
        ids = re.search(r'aria-labelledby="([^"]+)"', f["svg"]).group(1).split()
        assert ids == [f["title"][0], f["desc"][0]], name
        assert len(f["desc"][1]) > 80, f"{name}: the text alternative is too thin: {f['desc'][1]!r}"
        assert len(f["caption"]) > 80, f"{name}: the caption does not say what to look at"
        # colours come from the stylesheet (light and dark), never written into the drawing
        assert not re.search(r'(fill|stroke)="#', f["body"]), f"{name} hard-codes a colour"


def test_fisherman_bars_are_the_worksheet_weights(figs):
    ws = _json("worksheet.json")
    desc = figs["lesson/1-why-more-heads/index.html"]["fisherman-queries"]["desc"][1]
    r = len(ws["tokens"]) - 1
    for h in range(ws["heads"]):
        part = desc.split(f"head {h + 1}: ")[1].split(";")[0]
        shown = [float(x) for x in re.findall(r" (\d\.\d\d)", part)]
        assert shown == [round(w, 2) for w in ws["A"][h][r]], f"head {h + 1}"


def test_coat_queries_are_attention_weights_of_the_models(figs):
    vocab = _json("vocab.json")
    chosen = _json("example_search.json")["chosen"]  # page 1's sentence (export/lesson/example_search.py)
    for name, heads in (("coat-query", 1), ("coat-heads", 4)):
        f = figs["lesson/1-why-more-heads/index.html"][name]
        assert f"Receiver: {chosen['tokens'][-1]}" in f["desc"][1]
        groups = [g for g in f["desc"][1].split("; ")]
        assert len(groups) == heads
        for g in groups:
            weights = [float(x) for x in re.findall(r" (\d\.\d\d)", g)]
            assert len(weights) == len(chosen["tokens"]) and abs(sum(weights) - 1) <= 0.01 * len(weights), g
        # The sentence run through the model has no unknown word, so nothing reads "(UNK)".
        assert all(t in vocab["itos"] for t in chosen["tokens"]), chosen["tokens"]
        assert "(UNK)" not in f["body"], name
    four = figs["lesson/1-why-more-heads/index.html"]["coat-heads"]["desc"][1].split("; ")
    for h, group in enumerate(four):  # the figure draws the weights the search recorded
        shown = [float(x) for x in re.findall(r" (\d\.\d\d)", group)]
        assert shown == [round(w, 2) for w in chosen["weights"][h]], f"head {h + 1}"


def test_model_map_shapes_and_links(figs, pages):
    ev = _json("evidence.json")
    C, T, D, H = (
        ev["vocabulary"]["C"],
        ev["vocabulary"]["T"],
        ev["protocol"]["d_model"],
        ev["protocol"]["heads"]["four_heads"],
    )
    page = "lesson/4-model-training-generation/index.html"
    body = figs[page]["model-map"]["body"]
    for s in (
        f"[{C:,}, {D}]",
        f"[B, {T}, {D}]",
        f"[B, {H}, {T}, {D // H}]",
        f"[B, {C:,}]",
        f"[{D}, {ev['protocol']['hidden']}]",
    ):
        assert html.escape(s) in body or s in body, f"the map lacks the shape {s}"
    assert body.count('class="mha-lane"') == H
    html_text = pages[page]
    targets = set(re.findall(r'xlink:href="#([\w-]+)"', body))
    assert {
        "stage-token-rows-detail",
        "stage-scores-detail",
        "stage-mask-detail",
        "stage-loss-detail",
        "generation",
    } <= targets
    for t in targets:
        assert f'id="{t}"' in html_text, f"the map links to #{t}, which the page lacks"
    backlinks = set(re.findall(r'<a href="#(map-[\w-]+)">', html_text))
    assert len(backlinks) >= 10
    for t in backlinks:
        assert f'id="{t}"' in body, f"a stage links to #{t}, which the map lacks"


def test_traces_and_parameters_are_the_evidence(figs):
    ev = _json("evidence.json")
    page = figs["lesson/how-measured/index.html"]
    desc = page["traces-zoom"]["desc"][1]
    for r in ev["runs"]:
        if r["model"] in ("one_head", "four_heads"):
            label = ev["protocol"]["labels"][r["model"]]
            assert f"{label} seed {r['seed']}: " in desc
            assert f"best {r['val_loss']:.3f} at update {r['best_update']:,}" in desc
    pdesc = page["parameters"]["desc"][1]
    for m in ev["protocol"]["models"]:
        assert f"{ev['protocol']['labels'][m]}, {ev['aggregates'][m]['parameters']:,} parameters" in pdesc


def test_head_sweep_figure_draws_the_evidence(figs, pages):
    """Every seed a dot (the extra seeds hollow), every head count its mean and sd; below, every count
    minus four heads seed by seed with its 95 % interval (its words are checked in test_paired_claims.py)."""
    sweep = _json("evidence.json")["head_sweep"]
    f = figs["lesson/5-results/index.html"]["head-sweep"]
    desc, body = f["desc"][1], f["body"]
    runs = [r for m in sweep["models"] for r in m["runs"] + m["extra_runs"]]
    dots = [
        float(y) for y in re.findall(r'<circle cx="[0-9.]+" cy="([0-9.]+)" r="[0-9.]+" class="mha-sweep__dot[" ]', body)
    ]
    assert len(dots) == len(runs) >= len(sweep["models"]) * len(sweep["seeds"])
    assert body.count("mha-sweep__dot--extra") == sum(len(m["extra_runs"]) for m in sweep["models"])
    # y grows downwards: a dot drawn higher (beyond the 0.1 px the drawing rounds to) is a worse run
    ppl = [r["test_perplexity"] for r in runs]
    for a in range(len(runs)):
        for b in range(len(runs)):
            if dots[a] < dots[b] - 0.1:
                assert ppl[a] > ppl[b], (runs[a]["model"], runs[a]["seed"], runs[b]["model"], runs[b]["seed"])
    for m in sweep["models"]:
        shown = re.search(
            rf"(?:^|; ){m['heads']} heads? of width {m['head_dim']}: mean ([0-9.]+) ± ([0-9.]+) \((.*?)\)", desc
        )
        assert shown, f"the text alternative lacks {m['heads']} heads"
        assert float(shown.group(1)) == round(m["perplexity_mean"], 2) and float(shown.group(2)) == round(
            m["perplexity_sd"], 2
        )
        seeds = ", ".join(f"seed {r['seed']} {r['test_perplexity']:.2f}" for r in m["runs"])
        assert shown.group(3) == seeds + "".join(
            f"; extra seed {r['seed']} {r['test_perplexity']:.2f}" for r in m["extra_runs"]
        )
    paired = sweep["findings"]["paired"]
    diffs = re.findall(r'<circle cx="[0-9.]+" cy="[0-9.]+" r="[0-9.]+" class="mha-sweep__diff"', body)
    assert len(diffs) == sum(c["n"] for c in paired["all"].values())
    assert body.count('class="mha-sweep__ci"') == 3 * sum(c["low"] is not None for c in paired["all"].values())


def test_head_palette_is_defined_once_for_light_and_dark():
    css = (ROOT / "wasm_assets/palette.css").read_text()
    root, dark = css.split('[data-md-color-scheme="slate"]', 1)
    for k in range(1, 5):
        assert f"--mha-head-{k}:" in root and f"--mha-head-{k}:" in dark.split("}")[0]
    others = list((ROOT / "site_src/css").glob("*.css"))
    assert not any(
        "--mha-head-1:" in p.read_text() or "--mha-model-" in p.read_text().replace("var(--mha-model", "")
        for p in others
    )


def test_tokenizer_figure_states_the_bpe_and_asks_the_window_question(figs, pages):
    f = figs["lesson/how-measured/index.html"]["tokenizers"]
    data = _json("subwords.json")
    assert f"{data['vocab_size']:,} items" in f["caption"]
    assert f"{data['training_stories']:,} training stories" in f["caption"]
    for kind in ("words", "subwords", "characters"):
        assert f"{len(data['tokens'][kind])} tokens" in f["desc"][1], kind
    assert "Does that window always hold four words?" in pages["lesson/how-measured/index.html"]


def test_cached_subwords_equal_a_fresh_training_run():
    from export.artefacts import Artefacts
    from export.data import DEFAULT_DATA
    from export.lesson import subwords

    if not Path(DEFAULT_DATA).is_file():
        pytest.skip(f"the stories are not at {DEFAULT_DATA}; the build uses wasm_assets/subwords.json")
    fresh, encoder = subwords.build()
    cached = _json("subwords.json")
    assert fresh == cached, "wasm_assets/subwords.json is stale: run `python -m export.lesson.subwords`"
    assert encoder == Artefacts().bpe_tokenizer.read_text(), (
        "wasm_assets/bpe_tokenizer.json is stale: run `python -m export.lesson.subwords`"
    )
    assert fresh["vocab_size"] == subwords.VOCAB_SIZE == _json("vocab.json")["C"]


def test_the_figure_is_what_the_shipped_encoder_makes():
    from export.artefacts import Artefacts
    from export.lesson import subwords

    data = _json("subwords.json")
    assert subwords.three_ways(data["example"], subwords.load_bpe(Artefacts().bpe_tokenizer)) == data["tokens"]


def test_figure_reads_the_shipped_subwords_with_or_without_stories(monkeypatch, tmp_path):
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("figures_under_test", ROOT / "site_src/hooks/figures.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    monkeypatch.setenv("TINYSTORIES_PATH", str(tmp_path / "absent.txt"))
    data, _ = mod.subwords_result()
    assert data == _json("subwords.json")


def test_head_sweep_dots_leave_the_mean_tick_visible(figs):
    """Each count's seed dots sit beside its mean tick, not on it (the dots hid the ticks)."""
    body = figs["lesson/5-results/index.html"]["head-sweep"]["body"]
    ticks = [
        (float(a), float(b))
        for a, b in re.findall(
            r'<line x1="([0-9.]+)" y1="[0-9.]+" x2="([0-9.]+)" y2="[0-9.]+" class="mha-sweep__mean"', body
        )
    ]
    dots = [
        (float(cx), float(r))
        for cx, r in re.findall(r'<circle cx="([0-9.]+)" cy="[0-9.]+" r="([0-9.]+)" class="mha-sweep__dot"', body)
    ]
    assert ticks and dots
    for cx, r in dots:
        for x1, x2 in ticks:
            assert cx + r <= min(x1, x2) or cx - r >= max(x1, x2) or abs(cx - (x1 + x2) / 2) > 40, (
                f"a seed dot at x={cx} covers the mean tick {x1}-{x2}"
            )


def test_head_sweep_dots_and_ticks_stay_inside_their_panels(figs):
    """Every seed dot and mean tick lies inside its panel's frame (five seeds' dots ran past the
    left edge, over the axis labels)."""
    body = figs["lesson/5-results/index.html"]["head-sweep"]["body"]
    frames = [
        tuple(map(float, f))
        for f in re.findall(
            r'<rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="([0-9.]+)" class="mha-fig__plot"', body
        )
    ]
    assert len(frames) == 2, frames
    marks = [
        (float(cx) - float(r), float(cy), float(cx) + float(r))
        for cx, cy, r in re.findall(r'<circle cx="([0-9.]+)" cy="([0-9.]+)" r="([0-9.]+)" class="mha-sweep__', body)
    ]
    marks += [
        (min(float(a), float(b)), float(y), max(float(a), float(b)))
        for a, y, b in re.findall(
            r'<line x1="([0-9.]+)" y1="([0-9.]+)" x2="([0-9.]+)" y2="[0-9.]+" class="mha-sweep__mean"', body
        )
    ]
    assert len(marks) > 20
    for left, y, right in marks:
        assert any(x <= left and right <= x + w and top <= y <= top + h for x, top, w, h in frames), (
            f"a mark from x={left:.1f} to {right:.1f} at y={y:.1f} lies outside both panels {frames}"
        )
