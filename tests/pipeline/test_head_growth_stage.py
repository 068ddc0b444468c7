"""Heads forming during training (export/head_growth.py): the snapshot rerun and what is measured at each snapshot.

A tiny configuration runs anywhere: it trains with snapshots, checks the rerun
is train_run's run (same selected update and test loss), that an interrupted
rerun resumes to the same weights, and that every snapshot's numbers are the
ones its own saved weights give. The committed artefact is checked against the
shipped run's figures in evidence.json and, where the rerun's snapshots are on
disk (runs/head-growth/), against the final snapshot's weights.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from export import head_growth as hg
from export.artefacts import Artefacts
from export.corpus import prepare_corpus
from export.data import load_stories
from export.models import get_spec
from export.train import TrainConfig, train_run

ROOT = Path(__file__).resolve().parents[2]
WORDS = "the cat sat on a mat and the dog ran to the big red ball while lily sang".split()
SNAPS = (0, 10, 30)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    folder = tmp_path_factory.mktemp("growth")
    stories = []
    for i in range(30):
        words = [WORDS[j] for j in rng.integers(0, len(WORDS), int(rng.integers(5, 25)))]
        stories.append(" ".join(words).capitalize() + ". " + ("It was fun!" if i % 2 else "The end."))
    path = folder / "tiny.txt"
    path.write_text("".join(s + "\n<|endoftext|>\n" for s in stories))
    corpus = prepare_corpus(load_stories(str(path), 30), C=24, T=8)
    cfg = TrainConfig(updates=30, batch_size=16, eval_every=10, seeds=(11,), models=("four_heads",))
    rerun = hg.train_with_snapshots(corpus, folder / "run", cfg, snapshots=SNAPS, resume_every=15, log=lambda m: None)
    return corpus, cfg, folder, rerun


def _model(corpus, state):
    model = get_spec(hg.MODEL).build(len(corpus.vocab), corpus.T)
    model.load_state_dict(state)
    return model.eval()


def test_rerun_is_the_protocol_run(tiny):
    corpus, cfg, _, rerun = tiny
    reference, _ = train_run(hg.MODEL, 11, corpus, cfg, progress=False)
    assert (rerun["best_update"], rerun["test_loss"]) == (reference.best_update, reference.test_loss)
    assert rerun["trace"] == reference.trace


def test_interrupted_rerun_resumes_to_the_same_weights(tiny, tmp_path, monkeypatch):
    corpus, cfg, folder, _ = tiny
    calls = {"n": 0}
    real_step = hg.train_step

    def stop_at_update_20(*args):
        calls["n"] += 1
        if calls["n"] == 20:
            raise KeyboardInterrupt
        return real_step(*args)

    monkeypatch.setattr(hg, "train_step", stop_at_update_20)
    with pytest.raises(KeyboardInterrupt):
        hg.train_with_snapshots(corpus, tmp_path, cfg, snapshots=SNAPS, resume_every=15, log=lambda m: None)
    assert (tmp_path / "resume.pt").is_file() and not (tmp_path / "result.json").exists()
    monkeypatch.setattr(hg, "train_step", real_step)
    hg.train_with_snapshots(corpus, tmp_path, cfg, snapshots=SNAPS, resume_every=15, log=lambda m: None)
    for u in SNAPS:
        a = torch.load(hg.snapshot_path(tmp_path, u), weights_only=True)
        b = torch.load(hg.snapshot_path(folder / "run", u), weights_only=True)
        assert all(torch.equal(a[k], b[k]) for k in a)


def test_each_snapshot_measures_its_own_weights(tiny):
    corpus, _, folder, rerun = tiny
    prompts = ["the cat sat", "lily sang . the dog"]
    out = hg.measure(corpus, folder / "run", rerun, prompts, snapshots=SNAPS, subset=50, log=lambda m: None)
    json.dumps(out, allow_nan=False)  # the artefact is plain JSON
    assert [s["update"] for s in out["snapshots"]] == list(SNAPS)
    final = out["snapshots"][-1]
    state = torch.load(hg.snapshot_path(folder / "run", SNAPS[-1]), weights_only=True)
    assert final["weights_sha256"] == hg.state_sha256(state)
    model = _model(corpus, state)
    again = hg.measure_model(model, corpus.vocab.itos, prompts, hg._FirstWindows(corpus.windows["test"], 50))
    assert again == {k: final[k] for k in again}
    # the untrained snapshot differs: the slider shows change, not one model seven times
    assert out["snapshots"][0]["perplexity"] != final["perplexity"]
    for entry in out["snapshots"]:
        for p in entry["prompts"]:
            assert len(p["weights"]) == 4
            for row in p["weights"]:
                assert len(row) == len(p["tokens"]) and math.isclose(sum(row), 1, abs_tol=1e-3)


# --------------------------------------------------------------------------- the committed artefact


@pytest.fixture(scope="module")
def growth():
    path = Artefacts().head_growth
    if not path.is_file():
        pytest.skip("head_growth.json not written yet: run `python -m export head_growth`")
    return json.loads(path.read_text())


def test_artefact_names_the_shipped_run_beside_the_rerun(growth):
    evidence = json.loads(Artefacts().evidence.read_text())
    assert growth["shipped"] == hg.shipped_run(evidence)
    assert [s["update"] for s in growth["snapshots"]] == list(hg.SNAPSHOT_UPDATES)
    assert growth["rerun"]["test_perplexity"] > 0 and growth["updates"] == TrainConfig().updates


def test_final_snapshot_matches_its_weights(growth):
    folder = hg.rerun_folder(ROOT / "runs")
    path = hg.snapshot_path(folder, hg.SNAPSHOT_UPDATES[-1])
    if not path.is_file():
        pytest.skip(f"{path.relative_to(ROOT)} is not on this machine: run `python -m export head_growth`")
    from export.corpus import corpus_of_evidence

    state = torch.load(path, weights_only=True)
    final = growth["snapshots"][-1]
    assert final["weights_sha256"] == hg.state_sha256(state)
    torch.set_num_threads(1)
    corpus = corpus_of_evidence(json.loads(Artefacts().evidence.read_text()))
    model = _model(corpus, state)
    for p, want in zip(growth["prompts"], final["prompts"]):
        got = hg.prompt_attention(model, corpus.vocab.itos, p)
        assert got["tokens"] == want["tokens"]
        np.testing.assert_allclose(got["weights"], want["weights"], atol=2e-5)
    from export.heads import knockout

    ko = knockout(model, hg._FirstWindows(corpus.windows["test"], growth["subset"]["windows"]))
    for name, row in final["knockout"].items():
        assert math.isclose(ko[name]["test_perplexity"], row["test_perplexity"], rel_tol=1e-6)


def test_page_figure_draws_the_artefact(growth):
    import importlib.util
    import re
    import sys

    spec = importlib.util.spec_from_file_location("figures_growth_under_test", ROOT / "site_src/hooks/figures.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    out = mod.render("head-growth")
    got = re.findall(r'data-head="(\d+)" data-snapshot="(\d+)" data-change="([^"]+)"', out)
    want = [
        (h, i, s["knockout"][f"without_{h}"]["perplexity_change"])
        for i, s in enumerate(growth["snapshots"])
        for h in range(1, len(s["atlas"]) + 1)
    ]
    assert sorted((int(h), int(i), float(c)) for h, i, c in got) == sorted(want)
    assert f"{growth['rerun']['test_perplexity']:.2f}" in out and f"{growth['shipped']['test_perplexity']:.2f}" in out
