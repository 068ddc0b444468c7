"""The one-vs-several-head synthetic task (export/toy_task.py) and its figures on pages 1 and the appendix.

The stage runs on a tiny configuration anywhere; the committed artefact
(wasm_assets/toy_task.json) must show the gap the page claims, by page 5's rule
(several heads minus one head in share solved, paired by seed: a gap when the
95 % t-interval excludes zero, recomputed here with scipy), and the page's
figures must draw exactly its numbers and word the verdict its interval gives.
"""

from __future__ import annotations

import html
import importlib.util
import json
import math
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from scipy.stats import t as student_t

from export import toy_task
from export.artefacts import Artefacts

ROOT = Path(__file__).resolve().parents[2]


def test_stage_on_a_tiny_configuration(tmp_path):
    cfg = toy_task.ToyConfig(
        steps=12,
        tasks=("pair", "single"),
        heads=(1, 2),
        seeds=(1, 2),
        lr_grid=(1e-2, 3e-3),
        heldout=64,
        eval_every=5,
        examples=2,
    )
    path = toy_task.build(tmp_path, cfg, log=lambda m: None)
    assert path == Artefacts(tmp_path).toy_task
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # written atomically: no temporary file left
    data = json.loads(path.read_text())
    assert data["schema"] == toy_task.SCHEMA
    assert [t["task"] for t in data["tasks"]] == ["pair", "single"]
    for t in data["tasks"]:
        assert 0 <= t["chance"] <= 1
        params = {r["parameters"] for r in t["by_heads"].values()}
        assert len(params) == 1  # the same parameter count for every head count
        for h in ("1", "2"):
            r = t["by_heads"][h]
            assert [run["seed"] for run in r["runs"]] == [1, 2]
            assert r["lr"] in cfg.lr_grid and len(r["tuning"]) == len(cfg.lr_grid)
            assert [c[0] for c in r["runs"][0]["curve"]] == [0, 5, 10, 12]
            ex = r["examples"]
            assert len(ex) == 2 and len(ex[0]["attention"]) == int(h)
            for row in ex[0]["attention"]:
                assert abs(sum(row) - 1) < 1e-3 and len(row) == cfg.items + 1
        assert t["gap"]["multi_heads"] == 2


def test_same_seed_same_numbers():
    cfg = toy_task.ToyConfig(steps=5, eval_every=5, heldout=32)
    held = toy_task.make_batch("pair", cfg, cfg.heldout, torch.Generator().manual_seed(3))
    a, _ = toy_task.train_one("pair", 2, 1, 1e-2, cfg, held)
    b, _ = toy_task.train_one("pair", 2, 1, 1e-2, cfg, held)
    assert a == b


def test_sequences_have_one_A_and_one_B_and_the_right_targets():
    cfg = toy_task.ToyConfig()
    tags, numbers, target = toy_task.make_batch("pair", cfg, 256, torch.Generator().manual_seed(0))
    assert (tags[:, -1] == toy_task.TAG_Q).all()
    assert ((tags == toy_task.TAG_A).sum(1) == 1).all() and ((tags == toy_task.TAG_B).sum(1) == 1).all()
    a = numbers[tags == toy_task.TAG_A]
    b = numbers[tags == toy_task.TAG_B]
    assert torch.equal(target, torch.stack([a, b], 1))
    # A's place is random: every slot holds it somewhere in the batch
    assert set((tags == toy_task.TAG_A).int().argmax(1).tolist()) == set(range(cfg.items))


def test_bad_options_stop_with_one_line():
    with pytest.raises(ValueError, match="divide d_model"):
        toy_task.ToyConfig(heads=(3,))
    proc = subprocess.run(
        [sys.executable, "-m", "export", "toy_task", "--tasks", "nope"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "pair" in proc.stderr


# --------------------------------------------------------------------------- the committed artefact


@pytest.fixture(scope="module")
def artefact():
    path = Artefacts().toy_task
    if not path.is_file():
        pytest.skip("toy_task.json not written yet: run `python -m export toy_task`")
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def figures():
    spec = importlib.util.spec_from_file_location("figures_toy_under_test", ROOT / "site_src/hooks/figures.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _task(data, name):
    return next(t for t in data["tasks"] if t["task"] == name)


def _paired(task: dict, heads: int) -> dict:
    """Several heads minus one head in share solved, seed by seed, with a 95 % t-interval (independent of
    export/paired.py): the outcome is "better" or "worse" when the interval excludes zero."""
    one = {r["seed"]: r["accuracy"] for r in task["by_heads"]["1"]["runs"]}
    other = {r["seed"]: r["accuracy"] for r in task["by_heads"][str(heads)]["runs"]}
    diffs = [other[s] - one[s] for s in sorted(set(one) & set(other))]
    mean = sum(diffs) / len(diffs)
    half = student_t.ppf(0.975, len(diffs) - 1) * statistics.stdev(diffs) / math.sqrt(len(diffs))
    low, high = mean - half, mean + half
    return {
        "n": len(diffs),
        "mean": mean,
        "low": low,
        "high": high,
        "verdict": "multi-head better" if low > 0 else "one head better" if high < 0 else "no clear gap",
    }


def test_each_gap_follows_its_paired_interval(artefact):
    for t in artefact["tasks"]:
        for h, stored in t["gap"]["against_one_head"].items():
            want = _paired(t, int(h))
            assert stored["verdict"] == want["verdict"], (t["task"], h)
            assert stored["n"] == want["n"] >= 3
            for key in ("mean", "low", "high"):
                assert math.isclose(stored[key], want[key], abs_tol=1e-12), (t["task"], h, key)
        best = max(
            (h for h in artefact["config"]["heads"] if h > 1), key=lambda h: t["by_heads"][str(h)]["accuracy_mean"]
        )
        assert t["gap"]["multi_heads"] == best
        assert t["gap"]["verdict"] == _paired(t, best)["verdict"]
    # the page's claim: on the pair task several heads solve more than one head, beyond doubt by this rule
    pair = _task(artefact, "pair")
    assert pair["gap"]["verdict"] == "multi-head better"
    # the same parameter count and the same tuning budget for every head count
    assert len({r["parameters"] for r in pair["by_heads"].values()}) == 1
    assert {len(r["tuning"]) for t in artefact["tasks"] for r in t["by_heads"].values()} == {
        len(artefact["config"]["lr_grid"])
    }


def _points(x: float) -> str:
    return f"{100 * x:+.0f}".replace("-", "\u2212")


@pytest.mark.parametrize(
    "verdict, low, high, words",
    [
        ("multi-head better", 0.2, 0.6, "95 % interval +20 to +60, above zero: a gap"),
        ("no clear gap", -0.1, 0.5, "but the 95 % interval \u221210 to +50 contains zero: no clear gap"),
        ("one head better", -0.6, -0.2, "95 % interval \u221260 to \u221220, below zero: a gap the other way"),
    ],
)
def test_the_gap_is_worded_from_its_verdict(figures, verdict, low, high, words):
    """Every branch of the wording: the caption follows whatever interval the artefact holds."""
    said = figures.toy.gap_words(
        {
            "multi_heads": 2,
            "n": 5,
            "accuracy_difference": (low + high) / 2,
            "low": low,
            "high": high,
            "verdict": verdict,
        }
    )
    assert said.startswith("2 heads minus one head, seed by seed over 5 seeds:") and said.endswith(words)


def test_the_captions_state_the_recomputed_interval(artefact, figures):
    pair = _task(artefact, "pair")
    want = _paired(pair, pair["gap"]["multi_heads"])
    stated = (
        f"{pair['gap']['multi_heads']} heads minus one head, seed by seed over {want['n']} seeds: "
        f"mean {_points(want['mean'])} points, 95 % interval {_points(want['low'])} to "
        f"{_points(want['high'])}, above zero: a gap"
    )
    for name in ("toy-accuracy", "toy-summary"):  # page 1 and the appendix
        text = html.unescape(figures.render(name))
        assert stated in text, name
        assert "5 times" not in text and "larger sd" not in text, name


def test_page_figures_equal_the_artefact(artefact, figures):
    summary = figures.render("toy-summary")
    for t in artefact["tasks"]:
        row = re.search(rf'<tr data-task="{t["task"]}">(.*?)</tr>', summary).group(1)
        assert f'data-chance="{t["chance"]!r}"' in row
        for h, r in t["by_heads"].items():
            assert (
                f'data-heads="{h}" data-accuracy-mean="{r["accuracy_mean"]!r}" data-accuracy-sd="{r["accuracy_sd"]!r}"'
            ) in row
    pair = _task(artefact, "pair")
    curves = figures.render("toy-curves")
    finals = re.findall(r'data-heads="(\d+)" data-seed="(\d+)" data-final="([^"]+)"', curves)
    assert sorted((int(h), int(s), float(a)) for h, s, a in finals) == sorted(
        (int(h), run["seed"], run["accuracy"]) for h, r in pair["by_heads"].items() for run in r["runs"]
    )
    attention = figures.render("toy-attention")
    cells = re.findall(r'data-heads="(\d+)" data-head="(\d+)" data-slot="(\d+)" data-weight="([^"]+)"', attention)
    shown = ("1", str(pair["gap"]["multi_heads"]))  # one head against the head count that did best
    expected = [
        (int(h), k + 1, j, w)
        for h in shown
        for k, row in enumerate(pair["by_heads"][h]["examples"][0]["attention"])
        for j, w in enumerate(row)
    ]
    assert sorted((int(h), int(k), int(j), float(w)) for h, k, j, w in cells) == sorted(expected)
    text = html.unescape(figures.render("toy-summary"))
    assert f"{100 * pair['by_heads']['1']['accuracy_mean']:.1f} %" in text


def test_page1_accuracy_figure_shows_every_seed_beside_its_mean(artefact, figures):
    """Page 1's dot plot: every seed's accuracy, the mean per head count, chance; no dot hides a mean."""
    pair = _task(artefact, "pair")
    fig = figures.render("toy-accuracy")
    dots = re.findall(
        r'<circle cx="([0-9.]+)" cy="[0-9.]+" r="([0-9.]+)" class="mha-toy__dot [^"]*" '
        r'data-heads="(\d+)" data-seed="(\d+)" data-accuracy="([^"]+)"',
        fig,
    )
    assert sorted((int(h), int(s), float(a)) for _, _, h, s, a in dots) == sorted(
        (int(h), run["seed"], run["accuracy"]) for h, r in pair["by_heads"].items() for run in r["runs"]
    )
    means = re.findall(
        r'<line x1="([0-9.]+)" y1="[0-9.]+" x2="([0-9.]+)" y2="[0-9.]+" class="mha-toy__mean [^"]*" '
        r'data-heads="(\d+)" data-mean="([^"]+)"',
        fig,
    )
    assert {int(h): float(m) for _, _, h, m in means} == {
        int(h): r["accuracy_mean"] for h, r in pair["by_heads"].items()
    }
    for x1, _x2, h, _ in means:
        for cx, r, dh, _, _ in dots:
            if dh == h:  # the mean's bar starts right of its seeds' dots
                assert float(cx) + float(r) <= float(x1), (h, cx, x1)
    text = html.unescape(fig)
    assert f"chance {100 * pair['chance']:.1f} %" in text
    assert f"mean {100 * pair['by_heads']['1']['accuracy_mean']:.1f} %" in text


def test_curves_carry_their_recorded_points_for_the_replay(artefact, figures):
    pair = _task(artefact, "pair")
    curves = figures.render("toy-curves")
    shown = re.findall(r'data-heads="(\d+)" data-seed="(\d+)" data-final="[^"]+" data-points="([^"]+)"', curves)
    expected = {
        (int(h), run["seed"]): [(s, a) for s, a, _ in run["curve"]]
        for h, r in pair["by_heads"].items()
        for run in r["runs"]
    }
    assert {
        (int(h), int(s)): [(int(p.split(":")[0]), float(p.split(":")[1])) for p in pts.split()] for h, s, pts in shown
    } == expected
    assert 'class="mha-toy__replay"' in curves
