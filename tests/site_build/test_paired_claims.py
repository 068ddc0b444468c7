"""Every sentence on the site that compares two head counts follows its paired interval.

The intervals are recomputed from the per-seed perplexities in the evidence
(``paired_claims.py``, with scipy's t quantile, independent of the pipeline's
``export/paired.py``). Two doctored sweep files show the check failing, each
doctored against the real outcome for two heads against four (read from the
real runs, so both keep failing as more seeds are folded in): one where two
heads' runs give another outcome (clearly behind four heads', or clearly not
separated where the real runs are behind) while the page's findings still say
the real one, and one where the findings claim another outcome than the real
runs give.
"""

from __future__ import annotations

import copy
import html
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from export import head_sweep
from tests.site_build.paired_claims import interval, problems

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "wasm_assets"
PAGES = ("lesson/5-results/index.html", "compare/index.html")


def _evidence() -> dict:
    return json.loads((ASSETS / "evidence.json").read_text())


def _all_pages(site: Path) -> dict[str, str]:
    return {str(p.relative_to(site)): p.read_text(encoding="utf-8") for p in sorted(site.rglob("index.html"))}


def test_every_comparing_sentence_on_the_site_follows_its_interval(built_site):
    evidence = _evidence()
    pages = _all_pages(built_site)
    found = [p for p in problems(pages["lesson/5-results/index.html"], evidence)]
    for name, page in pages.items():
        if name != "lesson/5-results/index.html":
            found += [f"{name}: {p}" for p in problems(page, evidence)]
    assert found == []
    # and there is something to check: page 5 words every head count against four heads
    said = pages["lesson/5-results/index.html"]
    for m in evidence["head_sweep"]["models"]:
        if m["name"] != evidence["head_sweep"]["findings"]["paired"]["reference"]:
            assert f'data-claim="head_sweep.findings.paired.all.{m["name"]}"' in said, m["name"]
    assert 'data-claim="paired.source.one_head"' in said


def test_the_intervals_are_the_issues_on_the_source_seeds():
    """The three source seeds' intervals, as the issue computed them by hand (two decimals)."""
    evidence = _evidence()
    expected = {
        "one_head": (2.30, 0.92),
        "two_heads": (1.01, 1.66),
        "eight_heads": (0.14, 0.42),
        "sixteen_heads": (0.78, 0.90),
    }
    for name, (mean, half) in expected.items():
        c = interval(evidence, f"head_sweep.findings.paired.source.{name}")
        assert c["n"] == 3
        assert (round(c["mean"], 2), round(c["high"] - c["mean"], 2)) == (mean, half), name
        stored = evidence["head_sweep"]["findings"]["paired"]["source"][name]
        assert math.isclose(stored["half_width"], c["high"] - c["mean"], rel_tol=1e-9)


# Doctored sweeps -----------------------------------------------------------------------------------------


def _with_ppl(run: dict, ppl: float) -> dict:
    return {**run, "test_perplexity": ppl, "test_loss": math.log(ppl)}


def _four_heads_ppl(sweep: dict) -> dict[int, float]:
    return {
        r["seed"]: r["test_perplexity"]
        for m in sweep["models"]
        if m["name"] == "four_heads"
        for r in m["runs"] + m.get("extra_runs", [])
    }


def _two_heads_clearly_behind(evidence: dict) -> dict:
    """Two heads' runs three perplexity points above four heads' on every seed; findings left as they were."""
    sweep = evidence["head_sweep"]
    four = _four_heads_ppl(sweep)
    for m in sweep["models"]:
        if m["name"] == "two_heads":
            for key in ("runs", "extra_runs"):
                m[key] = [_with_ppl(r, four[r["seed"]] + 3.0 + 0.1 * k) for k, r in enumerate(m.get(key, []))]
    return evidence


def _two_heads_not_separated(evidence: dict) -> dict:
    """Two heads' runs a point above, then below, four heads' seed by seed (mean near zero, interval wide)."""
    sweep = evidence["head_sweep"]
    four = _four_heads_ppl(sweep)
    k = 0
    for m in sweep["models"]:
        if m["name"] == "two_heads":
            for key in ("runs", "extra_runs"):
                doctored = []
                for r in m.get(key, []):
                    doctored.append(_with_ppl(r, four[r["seed"]] + (1.0 if k % 2 == 0 else -1.1)))
                    k += 1
                m[key] = doctored
    return evidence


def _two_heads_runs_flipped(evidence: dict) -> dict:
    """Two heads' runs doctored to an outcome other than the real one (clearly behind four heads, or, where
    the real runs are behind, clearly not separated); the findings are left as the real runs made them."""
    real = _two_heads_outcome(evidence, "all")
    return (_two_heads_not_separated if real == "behind" else _two_heads_clearly_behind)(evidence)


def _flipped_runs_give(real: dict) -> str:
    return "not_separated" if _two_heads_outcome(real, "all") == "behind" else "behind"


# The outcome a flipped finding claims instead of the real one.
FLIPPED = {"not_separated": "behind", "behind": "not_separated", "ahead": "not_separated"}


def _two_heads_outcome(evidence: dict, which: str) -> str:
    return interval(evidence, f"head_sweep.findings.paired.{which}.two_heads")["outcome"]


def _findings_flip_two_heads(evidence: dict) -> dict:
    """The findings claim for two heads against four an outcome their runs do not give; the runs are unchanged.

    The claimed outcome is chosen against the real one recomputed here, so the fixture stays doctored
    whether the real runs leave two heads not separated from four or behind them.
    """
    for which in ("source", "all"):
        c = evidence["head_sweep"]["findings"]["paired"][which]["two_heads"]
        claim = FLIPPED[_two_heads_outcome(evidence, which)]
        wide = abs(c["mean"]) + 1.0
        low, high = (0.05, wide) if claim == "behind" else (-wide, wide)
        c.update(outcome=claim, low=low, high=high, half_width=(high - low) / 2)
    return evidence


def _refound(evidence: dict) -> dict:
    """The findings recomputed by the pipeline from the doctored runs: the page then says what they show."""
    sweep = evidence["head_sweep"]
    for m in sweep["models"]:
        ppl = [r["test_perplexity"] for r in m["runs"]]
        m["perplexity_mean"] = sum(ppl) / len(ppl)
    seeds = sweep["seeds"]
    sweep["findings"] = head_sweep.findings(sweep["models"], seeds, seeds + sweep.get("extra_seeds", []))
    return evidence


def _build(tmp: Path, evidence: dict) -> dict[str, str]:
    """The site built from ``wasm_assets/`` with this evidence (and its sweep as head_sweep.json)."""
    assets = tmp / "assets"
    shutil.copytree(
        ASSETS,
        assets,
        symlinks=False,
        ignore=lambda folder, names: [
            n for n in names if n in ("evidence.json", "head_sweep.json") and Path(folder) == ASSETS
        ],
    )
    (assets / "evidence.json").write_text(json.dumps(evidence, indent=1))
    (assets / "head_sweep.json").write_text(json.dumps(evidence["head_sweep"], indent=1))
    site = tmp / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "MHA_WASM_ASSETS": str(assets)}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {p: (site / p).read_text(encoding="utf-8") for p in PAGES}


@pytest.mark.parametrize(
    "doctor, expect",
    [
        (_two_heads_runs_flipped, _flipped_runs_give),
        (_findings_flip_two_heads, lambda real: _two_heads_outcome(real, "all")),
    ],
)
def test_the_check_fails_on_a_doctored_sweep(tmp_path, doctor, expect):
    real = _evidence()
    evidence = doctor(copy.deepcopy(real))
    pages = _build(tmp_path, evidence)
    found = problems(pages["lesson/5-results/index.html"], evidence)
    assert found, "the doctored sweep passed the check"
    assert any("two_heads" in p and f"give {expect(real)}" in p for p in found), found
    assert any("the figure says '2 heads minus 4 heads" in p for p in found), found


def test_the_check_passes_once_the_findings_follow_the_doctored_runs(tmp_path):
    """Control: with two heads clearly behind and the findings recomputed, the page says so, and passes;
    the sweep's quiz then gives two heads among the counts separated from four."""
    evidence = _refound(_two_heads_clearly_behind(copy.deepcopy(_evidence())))
    assert evidence["head_sweep"]["findings"]["paired"]["source"]["two_heads"]["outcome"] == "behind"
    pages = _build(tmp_path, evidence)
    assert problems(pages["lesson/5-results/index.html"], evidence) == []
    assert "Two heads <strong>are behind</strong> four heads" in pages["lesson/5-results/index.html"]
    assert _sweep_quiz_answer(pages["lesson/5-results/index.html"]) == _separated_in_words(evidence)
    assert 2 in _separated(evidence)


# The sweep's predict-then-check question: its right option is the counts separated from four heads ----

SWEEP_QUESTION = "which head counts does the rule above separate"
OPTION = re.compile(r'<li class="mha-quiz__option" data-correct="(true|false)">(.*?)</li>', re.S)


def _separated(evidence: dict) -> list[int]:
    sweep = evidence["head_sweep"]
    ref = sweep["findings"]["paired"]["reference"]
    return [
        m["heads"]
        for m in sweep["models"]
        if m["name"] != ref
        and interval(evidence, f"head_sweep.findings.paired.all.{m['name']}")["outcome"] != "not_separated"
    ]


def _separated_in_words(evidence: dict) -> str:
    sweep = evidence["head_sweep"]
    others = [m["heads"] for m in sweep["models"] if m["name"] != sweep["findings"]["paired"]["reference"]]
    hs = _separated(evidence)
    if not hs:
        return "None of them."
    if len(hs) == len(others):
        return "Every one of them."
    listed = ", ".join(map(str, hs[:-1])) + " and " + str(hs[-1]) if len(hs) > 1 else str(hs[0])
    return f"{listed} head{'s' if hs != [1] else ''} only."


def _sweep_quiz_answer(page: str) -> str:
    assert SWEEP_QUESTION in page, "page 5 has no quiz on the sweep"
    start = page.index(SWEEP_QUESTION)
    options = OPTION.findall(page[start : page.index('class="mha-quiz__whys"', start)])
    assert len(options) == 3 and [c for c, _ in options].count("true") == 1, options
    texts = [html.unescape(re.sub(r"<[^>]+>", "", t)).strip() for _, t in options]
    assert len(set(texts)) == 3, texts  # no wrong option repeats the right one
    return next(t for (c, _), t in zip(options, texts) if c == "true")


def test_the_sweep_quiz_answer_is_read_from_the_paired_evidence(built_site):
    page = (built_site / "lesson/5-results/index.html").read_text(encoding="utf-8")
    assert _sweep_quiz_answer(page) == _separated_in_words(_evidence())
