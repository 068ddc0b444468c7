"""The one-head microgpt: the same training as the four-head one, with one head over all 16 numbers.

``python -m export.microgpt --n-head 1`` writes ``microgpt-one-head.json``
(``Artefacts().microgpt_one_head``). Only the cut of the numbers differs: the
same weights are drawn in the same order (so the two start from the same
numbers), the same names are seen in the same order, for the same steps.
"""

from __future__ import annotations

import json
import random

import pytest

from export import microgpt as mg
from export.artefacts import Artefacts
from export.microgpt import cli

TINY = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "zoe", "liam", "noah", "lucas"]


@pytest.fixture(scope="module")
def pair():
    files = Artefacts()
    return mg.load_trained(files.microgpt_trained), mg.load_trained(files.microgpt_one_head)


def test_the_one_head_artefact_is_the_same_training_with_one_head(pair):
    four, one = pair
    assert list(one) == list(four)
    assert one["config"] == {**four["config"], "n_head": 1, "head_dim": 16}
    assert one["uchars"] == four["uchars"] and one["source"] == four["source"]
    assert len(one["losses"]) == len(four["losses"]) == four["config"]["steps"]
    assert {k: (len(m), len(m[0])) for k, m in one["weights"].items()} == {
        k: (len(m), len(m[0])) for k, m in four["weights"].items()
    }
    # The first step's loss comes from the same starting weights on the same name: at random
    # initialisation the cut barely matters, but the loss is not the same to the bit.
    assert abs(one["losses"][0] - four["losses"][0]) < 0.01
    assert one["losses"] != four["losses"]


def test_its_samples_reproduce_from_its_weights(pair):
    _, one = pair
    rng = random.Random(one["config"]["seed"])
    rng.shuffle(list(range(one["source"]["count"])))
    for _ in range(sum(len(row) for m in one["weights"].values() for row in m)):
        rng.gauss(0, 0.08)
    assert mg.sample_names(one["weights"], one["uchars"], 20, 0.5, rng, n_head=1) == one["samples"]


def test_cli_n_head_1_trains_the_twin(tmp_path):
    names = tmp_path / "names.txt"
    names.write_text("\n".join(TINY) + "\n", encoding="utf-8")
    docs = {}
    for n_head in (4, 1):
        out = tmp_path / f"h{n_head}.json"
        assert (
            cli.main(
                ["--names", str(names), "--out", str(out), "--steps", "3", "--n-head", str(n_head), "--no-progress"]
            )
            == 0
        )
        docs[n_head] = json.loads(out.read_text())
    assert docs[1]["config"]["n_head"] == 1 and docs[1]["config"]["head_dim"] == 16
    # Same starting weights: before the first update they are drawn identically.
    state = mg.init_state(random.Random(0), 27)
    # one position: every head sees only itself
    assert mg.gpt_step(state, 0, 0, [[]], [[]], n_head=1)[0].data == pytest.approx(
        mg.gpt_step(state, 0, 0, [[]], [[]], n_head=4)[0].data
    )
    assert docs[1]["losses"][0] == pytest.approx(docs[4]["losses"][0], abs=0.05)
    assert cli.default_out(1) == Artefacts().microgpt_one_head
    assert cli.default_out(4) == Artefacts().microgpt_trained


def test_cli_refuses_other_head_counts(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["--names", str(tmp_path / "x.txt"), "--n-head", "3"])
    assert stop.value.code == 2
    assert "invalid choice" in capsys.readouterr().err
