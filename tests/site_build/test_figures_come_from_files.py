"""Figures on the lesson pages come from the pipeline's files, and only from there.

1. Every ``<span class="ev" data-ev=...>`` in the built site equals the value at
   its path (evidence.json, walkthrough.json, vocab.json or the Lily toy that
   ``export.lesson.walkthrough.lily_example`` computes), formatted as the span says.
2. The Markdown sources of the lesson pages contain no hand-typed measured
   figures. The rule, applied to the text left after removing front matter,
   code blocks, inline code, macros (``{{ ... }}``, ``{% ... %}``), HTML tags
   and link targets: a number is flagged when it has a decimal point or a
   percent sign, or is 100 or more, unless it is one of the protocol's design
   constants (``DESIGN_CONSTANTS``). Small whole numbers (sizes such as w = 4,
   B = 2, seeds, "two heads") are allowed; anything measured must be a macro,
   and authored arithmetic can be marked with ``{{ authored(...) }}``.
3. The Lily toy is what the code says, checked against a plain re-derivation.
"""

from __future__ import annotations

import html
import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
# Design constants of the lesson's protocol (C, stories requested, updates, batch, hidden width).
DESIGN_CONSTANTS = {4000, 6000, 512, 256}
SCANNED = sorted([*DOCS.glob("lesson/**/*.md"), DOCS / "credits.md"])
# Pages whose authors still have to mark their authored toy numbers ({{ authored(0.8) }} or
# <span class="authored">0.8</span>): reported, not yet enforced. Empty: every page is enforced.
PENDING: set[str] = set()
SPAN = re.compile(r'<span class="ev(?: ev-long)?"([^>]*)>(.*?)</span>', re.S)
ATTR = re.compile(r'(data-ev(?:-src|-fmt|-fn)?)="([^"]*)"')


def _macros():
    spec = importlib.util.spec_from_file_location("evidence_macros", ROOT / "site_src/hooks/evidence_macros.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def sources(assets_dir):
    from export.lesson.walkthrough import lily_example

    out = {}
    for name, file in (
        ("evidence", "evidence.json"),
        ("walkthrough", "walkthrough.json"),
        ("vocab", "vocab.json"),
        ("example", "example_search.json"),
        ("page_data", "page_data.json"),
        ("microgpt_heads", "microgpt_heads.json"),
    ):
        path = assets_dir / file
        if path.is_file():
            out[name] = json.loads(path.read_text())
    if "vocab" in out:
        out["vocab"]["stoi"] = {t: i for i, t in enumerate(out["vocab"]["itos"])}
        out["toy"] = lily_example(out["vocab"]["itos"], out["vocab"]["T"])
    if "evidence" in out:  # page 5's interpretation figures, derived from the evidence
        from export.lesson.results import compute

        out["results"] = compute(out["evidence"])
    return out


def spans(site: Path):
    for page in sorted(site.rglob("*.html")):
        for attrs, text in SPAN.findall(page.read_text()):
            a = {k: html.unescape(v) for k, v in ATTR.findall(attrs)}
            yield page.relative_to(site), a, html.unescape(text)


def test_every_figure_matches_its_source(built_site, sources):
    m = _macros()
    checked, wrong = 0, []
    for page, a, text in spans(built_site):
        src = a.get("data-ev-src", "evidence")
        assert src in sources, f"{page}: a figure reads {src}, which the test could not load"
        value = m.lookup(sources[src], a["data-ev"], src)
        expected = m.format_value(value, a.get("data-ev-fmt", ""), a.get("data-ev-fn"))
        if text != expected:
            wrong.append(f"{page}: {src}:{a['data-ev']} shows {text!r}, the file gives {expected!r}")
        checked += 1
    assert not wrong, "\n".join(wrong)
    assert checked > 100, f"only {checked} evidence figures found in the built site"


def test_lesson_pages_show_their_figures(built_site):
    for page, minimum in (
        ("lesson/3-training-examples", 80),
        ("lesson/4-model-training-generation", 30),
        ("lesson/5-results", 30),
    ):
        text = (built_site / page / "index.html").read_text()
        assert len(SPAN.findall(text)) >= minimum, page
        assert "{{" not in text and "{%" not in text, f"{page}: an unrendered macro"


def _strip(md: str) -> str:
    md = re.sub(r"\A---\n.*?\n---\n", "", md, flags=re.S)
    md = re.sub(r"^(```|~~~).*?^\1", "", md, flags=re.S | re.M)
    md = re.sub(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", " ", md, flags=re.S)
    md = re.sub(r"`[^`\n]*`", " ", md)
    md = re.sub(r'<span class="authored">.*?</span>', " ", md, flags=re.S)
    md = re.sub(r"<[^>]*>", " ", md)
    md = re.sub(r"\]\([^)]*\)", "]", md)
    md = re.sub(r"\{[:.#][^}]*\}", " ", md)  # attribute lists such as { .md-button }
    return md


NUMBER = re.compile(r"(?<![\w\-/.:])(\d[\d,]*(?:\.\d+)?%?)(?![\w\-/]|\.\d)")


def typed_figures(md: str) -> list[str]:
    found = []
    for token in NUMBER.findall(_strip(md)):
        plain = token.rstrip("%").replace(",", "")
        if "." in plain or token.endswith("%"):
            found.append(token)
        elif plain.isdigit() and int(plain) >= 100 and int(plain) not in DESIGN_CONSTANTS:
            found.append(token)
    return found


def test_the_rule_catches_typed_figures():
    assert typed_figures("Four heads reach 28.78 ± 0.61, an 8.2% drop, in 1,234 s.") == [
        "28.78",
        "0.61",
        "8.2%",
        "1,234",
    ]
    assert typed_figures("C = 4,000, T = 64, batch 512, w = 4, seeds 11, 29 and 47.") == []
    assert typed_figures('Reach {{ ev("a.b", ".2f") }} with `x = 0.5` and {% if val("x") > 0.5 %}.{% endif %}') == []
    assert typed_figures("CDLA-Sharing-1.0 and arXiv:2305.07759, see [the page](a/1.2.html).") == []
    assert typed_figures('Weights {{ authored(0.8) }} and <span class="authored">0.2</span>.') == []


@pytest.mark.parametrize(
    "page",
    [
        pytest.param(p, marks=pytest.mark.xfail(reason="authored numbers not marked yet", strict=False))
        if str(p.relative_to(DOCS)) in PENDING
        else p
        for p in SCANNED
    ],
    ids=lambda p: str(p.relative_to(DOCS)),
)
def test_pages_have_no_hand_typed_figures(page):
    found = typed_figures(page.read_text())
    assert not found, f"{page.relative_to(ROOT)} types figures {found}: use {{{{ ev(...) }}}} (see evidence_macros.py)"


def test_lily_toy_matches_a_plain_rederivation(sources):
    """The page-3 numbers equal what a direct reading of the rules gives."""
    from export.wordlm import tokenize

    toy = sources["toy"]
    pieces = tokenize(toy["sentence"])
    words = ["<PAD>", "<BOS>", "<EOS>", "<UNK>"] + sorted(set(pieces))
    stoi = {t: i for i, t in enumerate(words)}
    ids = [1] + [stoi[t] for t in pieces] + [2]
    assert toy["tokens"] == pieces == ["lily", "found", "a", "red", "ball", "."]
    assert [v["token"] for v in toy["vocab"]] == words and toy["C"] == 10
    assert toy["ids"] == ids
    assert toy["blue_plain"] == [3] and toy["blue_bounded"] == [1, 3, 2]
    w = toy["w"]
    expected = []  # (left-padded input, target) for every position after BOS
    for pos in range(1, len(ids)):
        prior = ids[:pos][-w:]
        expected.append(([0] * (w - len(prior)) + prior, ids[pos]))
    assert [(r["context_ids"], r["target_id"]) for r in toy["rows"]] == expected
    assert toy["n_targets"] == len(pieces) + 1 == toy["X_shape"][0]
    assert toy["rows"][-1]["target_token"] == "<EOS>"
    assert set(toy["targets_by_width"].values()) == {len(pieces) + 1}
    assert toy["batch"]["y"] == [stoi["a"], stoi["red"]]
    assert toy["batch_sizes_B2"] == [2, 2, 2, 1]
    real = toy["real"]
    itos = sources["vocab"]["itos"]
    for row in real["rows"]:
        assert len(row["x"]) == real["T"] and row["x"][: row["pads"]] == [0] * row["pads"]
        assert [itos[i] for i in row["x"][row["pads"] :]] == row["prefix"]
        assert itos[row["target_id"]] == row["target"]


def test_page3_shows_the_toy(built_site, sources):
    text = (built_site / "lesson/3-training-examples/index.html").read_text()
    toy_spans = [
        a for a in (dict(ATTR.findall(attrs)) for attrs, _ in SPAN.findall(text)) if a.get("data-ev-src") == "toy"
    ]
    paths = {a["data-ev"] for a in toy_spans}
    for needed in (
        "n_targets",
        "C",
        "blue_plain",
        "blue_bounded",
        "rows.6.target_token",
        "targets_by_width.8",
        "batch.X",
        "real.rows.0.pads",
        "real.rows.1.target_id",
    ):
        assert needed in paths, needed
