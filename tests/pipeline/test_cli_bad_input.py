"""Bad input to ``python -m export``: one line saying what is wrong, exit status 2, nothing half-written.

Also: a finished run is one whose checkpoint loads and matches its result file,
a claim on a run ends when its owner is gone, and ``--device``.
"""

from __future__ import annotations

import json

import pytest
import torch

from export.checkpoints import load_full
from export.corpus import prepare_corpus
from export.data import load_stories
from export.vocabulary import write_vocabulary
from export.device import resolve_device
from export.protocol import run_protocol
from export.train import TrainConfig

from tests.pipeline.export_cli import ROOT, assert_refused, cli, cli_process
from tests.pipeline.test_registry_and_checkpoints import tiny_stories

SHIPPED = ROOT / "wasm_assets" / "checkpoints" / "four_heads-seed11.pt"
TINY = [
    "--vocab-size",
    "24",
    "--context",
    "8",
    "--updates",
    "4",
    "--batch-size",
    "8",
    "--eval-every",
    "2",
    "--seeds",
    "11",
    "--models",
    "mlp,one_head",
    "--no-progress",
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """Two finished tiny runs (seed 11) and their vocabulary."""
    folder = tmp_path_factory.mktemp("inputs")
    data = tiny_stories(folder / "tiny.txt")
    corpus = prepare_corpus(load_stories(data, 30, log=lambda m: None), C=24, T=8)
    cfg = TrainConfig(
        updates=4, batch_size=8, seeds=(11,), models=("mlp", "one_head"), eval_every=2, selection_windows=64
    )
    run_protocol(corpus, cfg, folder / "runs", progress=False, log=lambda m: None)
    write_vocabulary(corpus, folder / "assets", log=lambda m: None)
    return {
        "folder": folder,
        "data": data,
        "corpus": corpus,
        "cfg": cfg,
        "runs": folder / "runs",
        "vocab": folder / "assets" / "vocab.json",
    }


# generate ---------------------------------------------------------------------------------------


def test_generate_reads_the_shipped_compact_checkpoint():
    proc = cli_process("generate", SHIPPED, "Lily saw a big dog.", "--max-new-tokens", 6)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()


def test_a_refusal_through_the_door_itself_exits_2_with_one_line(tmp_path):
    assert_refused(cli_process("generate", tmp_path / "none.pt", "Lily"), "none.pt not found")


def test_generate_reads_a_full_checkpoint(tiny):
    proc = cli(
        "generate",
        tiny["runs"] / "one_head-seed11" / "best.pt",
        "the cat sat",
        "--vocab",
        tiny["vocab"],
        "--max-new-tokens",
        4,
        "--temperature",
        0.8,
        "--seed",
        3,
    )
    assert proc.returncode == 0, proc.stderr


def test_generate_refuses_a_vocabulary_of_another_size(tiny):
    assert_refused(cli("generate", SHIPPED, "Lily saw a dog.", "--vocab", tiny["vocab"]), "C = 4000", "vocab.json")


def test_generate_refuses_a_vocabulary_with_the_same_size_but_other_words(tiny, tmp_path):
    vocab = json.loads(tiny["vocab"].read_text())
    vocab["itos"] = vocab["itos"][:4] + list(reversed(vocab["itos"][4:]))  # same size, other ids
    other = tmp_path / "vocab.json"
    other.write_text(json.dumps(vocab))
    assert_refused(
        cli("generate", tiny["runs"] / "mlp-seed11" / "best.pt", "the cat", "--vocab", other),
        "not the one the model was trained with",
    )


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "warm"])
def test_generate_refuses_a_bad_temperature(value):
    assert_refused(cli("generate", SHIPPED, "Lily", f"--temperature={value}"), "--temperature")


def test_generate_names_a_missing_checkpoint_or_vocabulary(tmp_path):
    assert_refused(cli("generate", tmp_path / "none.pt", "Lily"), "none.pt not found")
    assert_refused(
        cli("generate", SHIPPED, "Lily", "--vocab", tmp_path / "none.json"), "none.json not found", "--vocab"
    )
    (tmp_path / "bad.json").write_text("{not json")
    assert_refused(cli("generate", SHIPPED, "Lily", "--vocab", tmp_path / "bad.json"), "bad.json is not valid JSON")


def test_generate_names_a_damaged_checkpoint(tmp_path):
    cut = tmp_path / "cut.pt"
    cut.write_bytes(SHIPPED.read_bytes()[:4000])
    assert_refused(cli("generate", cut, "Lily"), str(cut), "damaged")


# train ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "option, value, words",
    [
        ("--updates", "0", ["--updates", "at least 1"]),
        ("--eval-every", "0", ["--eval-every", "at least 1"]),
        ("--batch-size", "0", ["--batch-size", "at least 1"]),
        ("--context", "0", ["--context", "at least 1"]),
        ("--vocab-size", "4", ["--vocab-size", "at least 5"]),
        ("--seeds", "", ["--seeds", "at least one seed"]),
        ("--seeds", " , ", ["--seeds", "at least one seed"]),
        ("--models", "mlp,three_heads", ["--models", "three_heads"]),
        ("--device", "tpu", ["--device"]),
    ],
)
def test_train_refuses_bad_settings_before_writing_anything(tiny, tmp_path, option, value, words):
    runs = tmp_path / "runs"
    settings = [a for a in TINY]
    if option in settings:
        i = settings.index(option)
        del settings[i : i + 2]
    proc = cli("train", "--data", tiny["data"], "--runs", runs, *settings, f"{option}={value}")
    assert_refused(proc, *words)
    assert not runs.exists()


def test_train_refuses_a_runs_folder_under_a_file(tiny, tmp_path):
    (tmp_path / "plain").write_text("not a folder")
    assert_refused(cli("train", "--data", tiny["data"], "--runs", tmp_path / "plain" / "runs", *TINY), "is a file")
    assert (tmp_path / "plain").read_text() == "not a folder"


def test_a_truncated_checkpoint_is_not_a_finished_run(tiny, tmp_path):
    runs = tmp_path / "runs"
    for name in ("mlp", "one_head"):
        (runs / f"{name}-seed11").mkdir(parents=True)
        for f in ("best.pt", "result.json"):
            (runs / f"{name}-seed11" / f).write_bytes((tiny["runs"] / f"{name}-seed11" / f).read_bytes())
    ckpt = runs / "mlp-seed11" / "best.pt"
    ckpt.write_bytes(ckpt.read_bytes()[:3000])
    log = []
    run_protocol(tiny["corpus"], tiny["cfg"], runs, progress=False, log=log.append)
    assert any("mlp-seed11" in line and "damaged" in line and "redone" in line for line in log), log
    assert any("one_head seed 11: already trained" in line for line in log), log
    assert load_full(ckpt).spec.name == "mlp"  # trained again, whole


def test_a_checkpoint_that_does_not_match_its_result_is_redone(tiny, tmp_path):
    runs = tmp_path / "runs"
    for name in ("mlp", "one_head"):
        (runs / f"{name}-seed11").mkdir(parents=True)
        for f in ("best.pt", "result.json"):
            (runs / f"{name}-seed11" / f).write_bytes((tiny["runs"] / f"{name}-seed11" / f).read_bytes())
    swapped = runs / "mlp-seed11" / "best.pt"  # the one-head checkpoint in the MLP's folder
    swapped.write_bytes((tiny["runs"] / "one_head-seed11" / "best.pt").read_bytes())
    log = []
    run_protocol(tiny["corpus"], tiny["cfg"], runs, progress=False, log=log.append)
    assert any("another model" in line for line in log), log
    assert load_full(swapped).spec.name == "mlp"


# device -----------------------------------------------------------------------------------------


def test_device_choice_and_record(tiny, tmp_path):
    assert resolve_device("cpu").type == "cpu"
    expected = (
        "cuda"
        if torch.cuda.is_available()
        else ("mps" if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available() else "cpu")
    )
    assert resolve_device("auto").type == expected
    proc = cli("train", "--data", tiny["data"], "--runs", tmp_path / "runs", *TINY, "--device", "cpu")
    assert proc.returncode == 0, proc.stderr
    assert "training on cpu" in proc.stdout
    result = json.loads((tmp_path / "runs" / "mlp-seed11" / "result.json").read_text())
    assert result["device"]["device"] == "cpu" and result["device"]["name"] == result["device"]["cpu"] != ""


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_asking_for_a_missing_device_is_refused(tiny, tmp_path):
    assert_refused(
        cli("train", "--data", tiny["data"], "--runs", tmp_path / "runs", *TINY, "--device", "cuda"), "no cuda device"
    )
    assert not (tmp_path / "runs").exists()
