"""The head-count sweep (page 5, "How many heads?"): its stage on tiny runs, and the committed artefact."""

import json
import math
import statistics
import subprocess
import sys

import pytest

from export.artefacts import Artefacts
from export.defaults import EXTRA_SEEDS
from export.head_sweep import SCHEMA, findings, sweep_models
from export.models import MODELS, get_spec
from tolerance import FLOAT32_REL, assert_close_tree

WORDS = "the cat sat on a mat and the dog ran to the big red ball while lily sang".split()
TINY = [
    "--updates",
    "4",
    "--batch-size",
    "8",
    "--eval-every",
    "2",
    "--vocab-size",
    "24",
    "--context",
    "8",
    "--no-progress",
]


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "export", *map(str, args)], capture_output=True, text=True, timeout=600
    )


def test_the_sweep_is_every_attention_model_of_the_registry_at_one_width():
    names = sweep_models()
    specs = [get_spec(n) for n in names]
    assert [s.heads for s in specs] == [1, 2, 4, 8, 16]
    assert len({s.d_model for s in specs}) == 1 and len({s.hidden for s in specs}) == 1
    assert {s.name for s in MODELS if s.ships and s.kind == "attention"} == {"one_head", "four_heads"}


@pytest.fixture(scope="module")
def tiny_sweep(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sweep")
    data = folder / "tiny.txt"
    data.write_text(
        "".join(
            " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(6 + i % 9)).capitalize()
            + ". The end.\n<|endoftext|>\n"
            for i in range(30)
        )
    )
    runs, out = folder / "runs", folder / "out"
    trained = run_cli(
        "train", "--data", data, "--runs", runs, "--seeds", "11,29", "--models", ",".join(sweep_models()), *TINY
    )
    assert trained.returncode == 0, trained.stderr
    vocab = run_cli("vocab", "--data", data, "--vocab-size", "24", "--context", "8", "--out", out)
    assert vocab.returncode == 0, vocab.stderr
    return runs, out


def test_the_stage_writes_every_head_count_with_the_runs_fields(tiny_sweep):
    runs, out = tiny_sweep
    done = run_cli("sweep", "--runs", runs, "--seeds", "11,29", "--out", out)
    assert done.returncode == 0, done.stderr
    data = json.loads(Artefacts(out).head_sweep.read_text())
    assert data["schema"] == SCHEMA
    assert [m["heads"] for m in data["models"]] == [1, 2, 4, 8, 16]
    assert [m["head_dim"] * m["heads"] for m in data["models"]] == [data["d_model"]] * 5
    for m in data["models"]:
        assert [r["seed"] for r in m["runs"]] == [11, 29]
        ppl = [r["test_perplexity"] for r in m["runs"]]
        assert m["perplexity_mean"] == pytest.approx(statistics.fmean(ppl), rel=1e-12)
        assert m["perplexity_sd"] == pytest.approx(statistics.stdev(ppl), rel=1e-12)
        for r in m["runs"]:
            assert math.isclose(r["test_perplexity"], math.exp(r["test_loss"]), rel_tol=1e-9)
    assert data["findings"]["parameters_equal"] is True  # the same width: the same parameter count
    assert data["extra_seeds"] == list(EXTRA_SEEDS)  # declared; none of them trained here
    assert data["findings"] == findings(data["models"], [11, 29], [11, 29, *EXTRA_SEEDS])
    paired = data["findings"]["paired"]
    assert paired["reference"] == "four_heads" and set(paired["source"]) == set(sweep_models()) - {"four_heads"}
    for name, c in paired["source"].items():  # other minus four heads, seed by seed
        mine = {r["seed"]: r["test_perplexity"] for m in data["models"] if m["name"] == name for r in m["runs"]}
        four = {r["seed"]: r["test_perplexity"] for m in data["models"] if m["name"] == "four_heads" for r in m["runs"]}
        assert c["differences"] == [mine[s] - four[s] for s in (11, 29)]
    assert "timing" not in data  # timing is its own, explicit measurement


def test_the_timing_is_measured_on_one_thread_for_every_model(tiny_sweep):
    runs, out = tiny_sweep
    done = run_cli("sweep", "--runs", runs, "--seeds", "11,29", "--out", out, "--time-updates")
    assert done.returncode == 0, done.stderr
    timing = json.loads(Artefacts(out).head_sweep.read_text())["timing"]
    assert timing["threads"] == 1 and set(timing["per_update"]) == set(sweep_models())
    assert all(t["median_ms"] > 0 and t["steps"] > 0 for t in timing["per_update"].values())
    again = run_cli("sweep", "--runs", runs, "--seeds", "11,29", "--out", out)  # kept unless measured again
    assert again.returncode == 0
    assert json.loads(Artefacts(out).head_sweep.read_text())["timing"] == timing


def test_a_missing_or_unlike_run_is_refused_in_one_line(tiny_sweep, tmp_path):
    runs, out = tiny_sweep
    no_records = tmp_path / "records"  # not the project's records (they hold seed 47's real runs)
    missing = run_cli("sweep", "--runs", runs, "--seeds", "11,29,47", "--out", tmp_path, "--records", no_records)
    assert missing.returncode == 2
    assert missing.stderr.count("\n") == 1 and "seed47" in missing.stderr and "missing" in missing.stderr
    assert not Artefacts(tmp_path).head_sweep.exists()
    copy = tmp_path / "runs"
    for folder in runs.iterdir():
        if (folder / "result.json").is_file():
            (copy / folder.name).mkdir(parents=True)
            (copy / folder.name / "result.json").write_text((folder / "result.json").read_text())
    odd = copy / "eight_heads-seed29" / "result.json"
    result = json.loads(odd.read_text())
    result["key"]["lr"] = 1.0
    odd.write_text(json.dumps(result))
    unlike = run_cli("sweep", "--runs", copy, "--seeds", "11,29", "--out", tmp_path, "--records", no_records)
    assert unlike.returncode == 2 and "other settings" in unlike.stderr and "lr" in unlike.stderr
    assert not Artefacts(tmp_path).head_sweep.exists()


# The committed artefact ------------------------------------------------------------------------------


def _committed():
    path = Artefacts().head_sweep
    if not path.is_file():
        pytest.skip("head_sweep.json is not committed yet (python -m export sweep)")
    return json.loads(path.read_text()), json.loads(Artefacts().evidence.read_text())


def test_the_committed_sweep_has_five_head_counts_by_three_seeds_and_equal_sizes():
    sweep, evidence = _committed()
    assert [m["heads"] for m in sweep["models"]] == [1, 2, 4, 8, 16]
    assert sweep["seeds"] == evidence["protocol"]["seeds"]
    assert len({m["parameters"] for m in sweep["models"]}) == 1
    fields = set(evidence["runs"][0])
    for m in sweep["models"]:
        assert [r["seed"] for r in m["runs"]] == sweep["seeds"]
        for r in m["runs"]:
            assert set(r) == fields and r["updates"] == evidence["protocol"]["updates"]
            assert r["key"]["corpus"] == evidence["runs"][0]["key"]["corpus"]
    seeds = sweep["seeds"]
    assert_close_tree(
        sweep["findings"], findings(sweep["models"], seeds, seeds + sweep["extra_seeds"]), rel=FLOAT32_REL
    )
    for m in sweep["models"]:  # an extra seed's run was trained like the source's
        for r in m["extra_runs"]:
            assert r["seed"] in sweep["extra_seeds"] and r["key"] == m["runs"][0]["key"]


def test_the_shipped_models_in_the_sweep_are_the_protocols_own_runs():
    sweep, evidence = _committed()
    for m in sweep["models"]:
        if m["name"] in evidence["protocol"]["models"]:
            theirs = [r for r in evidence["runs"] if r["model"] == m["name"]]
            assert_close_tree(m["runs"], theirs, rel=FLOAT32_REL)
            agg = evidence["aggregates"][m["name"]]
            assert m["perplexity_mean"] == pytest.approx(agg["perplexity_mean"], rel=FLOAT32_REL)


def test_the_evidence_embeds_the_committed_sweep():
    sweep, evidence = _committed()
    assert evidence.get("head_sweep") == sweep
