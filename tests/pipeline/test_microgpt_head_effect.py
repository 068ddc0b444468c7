"""Where microgpt's heads matter (``python -m export microgpt_heads``): recomputed from the trained weights.

The stage measures in numpy, all names at once. Here the whole document is
recomputed from the two committed models and the names list, and its top
prefixes are checked once more against the plain-float model the page runs
(``floats.forward_attention`` with a ``head_mask``: the Explore switches).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from export.artefacts import Artefacts
from export.lesson import page_data
from export.microgpt import floats, head_effect
from tests.tolerance import FLOAT64_REL, assert_close_tree

ROOT = Path(__file__).resolve().parents[2]
# ../shared beside the checkout (a worktree one folder deeper has it one level up), or $NAMES_PATH.
CANDIDATES = (
    [Path(os.environ["NAMES_PATH"])]
    if os.environ.get("NAMES_PATH")
    else [ROOT.parent / "shared/data/names/names.txt", ROOT.parents[1] / "shared/data/names/names.txt"]
)
NAMES = next((p for p in CANDIDATES if p.is_file()), CANDIDATES[0])


@pytest.fixture(scope="module")
def committed():
    return json.loads(Artefacts().microgpt_heads.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def fresh():
    if not NAMES.is_file():
        pytest.skip(f"the names list is not at {NAMES} (set NAMES_PATH)")
    art = Artefacts()
    return head_effect.build(NAMES, art.microgpt_trained, art.microgpt_one_head)


def tv(p, q):
    return 0.5 * sum(abs(a - b) for a, b in zip(p, q))


def test_the_committed_file_was_measured_on_the_committed_models(committed):
    art = Artefacts()
    assert head_effect.stale_inputs(art) == []
    four = floats.load_trained(art.microgpt_trained)
    assert committed["inputs"]["names"] == four["source"]["sha256"]
    assert committed["names"] == four["source"]["count"]


def test_recomputed_from_the_weights_equals_the_committed_file(fresh, committed):
    # Floats of float64 sums over ~230,000 predictions: within 1e-9 relative on any processor; the
    # prefixes of each top list are discrete, but two near-equal effects may swap on another
    # processor, so an entry may differ only where its effect ties its neighbour's within 1e-9.
    for key in ("format", "inputs", "measure", "names", "trained_steps", "predictions", "distinct_prefixes"):
        assert fresh[key] == committed[key], key
    assert_close_tree(fresh["loss"], committed["loss"], rel=1e-9, abs_=0)
    assert_close_tree(fresh["effect"], committed["effect"], rel=1e-9, abs_=0)
    assert_close_tree(fresh["gain"], committed["gain"], rel=1e-6, abs_=1e-12)  # differences of near-equal losses
    assert [h["head"] for h in fresh["lean"]] == [h["head"] for h in committed["lean"]]
    assert_close_tree(
        [[x["effect"] for x in h["letters"]] for h in fresh["lean"]],
        [[x["effect"] for x in h["letters"]] for h in committed["lean"]],
        rel=1e-9,
        abs_=0,
    )
    assert_close_tree(fresh["by_letter"], committed["by_letter"], rel=1e-9, abs_=1e-12)
    assert fresh["top"].keys() == committed["top"].keys()
    for key, entries in committed["top"].items():
        mine = fresh["top"][key]
        assert [e["tv"] for e in mine] == pytest.approx([e["tv"] for e in entries], rel=1e-9)
        for i, (a, b) in enumerate(zip(mine, entries)):
            if a["prefix"] != b["prefix"]:
                neighbours = [e["tv"] for e in entries[max(0, i - 1) : i + 2]]
                assert max(neighbours) - min(neighbours) < 1e-9 * max(neighbours), (key, i, a, b)


def test_the_top_prefixes_move_the_page_models_distribution_by_the_stated_amount(committed):
    """The plain-float model the page runs (Explore's switches), one prefix at a time."""
    model = floats.load_trained(Artefacts().microgpt_trained)
    n_head = model["config"]["n_head"]
    masks = {f"head{h + 1}_off": [i != h for i in range(n_head)] for h in range(n_head)}
    masks["all_off"] = [False] * n_head
    for key, entries in committed["top"].items():
        assert len(entries) == head_effect.TOP
        values = [e["tv"] for e in entries]
        assert values == sorted(values, reverse=True), key
        for e in entries[:3]:
            assert e["name"].startswith(e["prefix"]) and len(e["prefix"]) <= len(e["name"])
            i = len(e["prefix"])
            full = floats.forward_attention(model["weights"], model["uchars"], e["name"])["probs"][i]
            off = floats.forward_attention(model["weights"], model["uchars"], e["name"], head_mask=masks[key])["probs"][
                i
            ]
            assert tv(full, off) == pytest.approx(e["tv"], rel=1e-9)
            symbols = [*model["uchars"], "end"]
            assert symbols[full.index(max(full))] == e["top_before"]
            assert symbols[off.index(max(off))] == e["top_after"]
            assert max(off) == pytest.approx(e["p_after"], rel=FLOAT64_REL * 1e3)


def test_the_losses_are_the_mean_over_every_prediction_of_every_name(committed):
    """A few names by hand with the page's model: the stage's loss is the mean of -log p(next)."""
    model = floats.load_trained(Artefacts().microgpt_trained)
    names = ["emma", "zoe"]
    tokens, counts = head_effect.encode_names(names, model["uchars"], model["config"]["block_size"])
    import numpy as np

    probs = head_effect.next_letter_probs(model, tokens, [[1] * model["config"]["n_head"]])[0]
    for row, name in enumerate(names):
        by_hand = floats.forward_attention(model["weights"], model["uchars"], name)["probs"]
        target = list(tokens[row, 1 : counts[row] + 1])
        for i, t in enumerate(target):
            assert probs[row, i, t] == pytest.approx(by_hand[i][t], rel=1e-12)
    assert np.isfinite(list(committed["loss"].values())).all()
    if NAMES.is_file():  # each name is predicted letter by letter, then its end
        assert committed["predictions"] == sum(len(n) + 1 for n in head_effect.read_names(NAMES))


def test_retraining_microgpt_makes_the_page_data_stale(tmp_path):
    """`make microgpt` rewrites the model files: the freshness check then names them."""
    art = Artefacts()
    copy = Artefacts(tmp_path)
    for p in (art.microgpt_trained, art.microgpt_one_head, art.microgpt_heads):
        (tmp_path / p.name).write_bytes(p.read_bytes())
    assert head_effect.stale_inputs(copy) == []
    model = json.loads(copy.microgpt_one_head.read_text())
    model["losses"][0] += 1.0
    copy.microgpt_one_head.write_text(json.dumps(model))
    assert head_effect.stale_inputs(copy) == ["microgpt-one-head.json"]
    assert any(p.name == "microgpt_heads.json" for p in page_data.inputs(art))
