"""The protocol end to end on a few tiny stories, aggregates, evidence and generation."""

import json
import math
import statistics
import subprocess
import sys

import numpy as np
import pytest
import torch

from export.evidence import SCHEMA, validate
from export.preset import preset_prompt
from export.generate import EXCLUDED_IDS, Mulberry32, choose_next, generate_ids
from export.models import MODEL_NAMES
from export.multihead import MultiHeadAttentionLM
from export.checkpoints import load_checkpoint
from export.protocol import aggregate, relative_change
from export.train import RunResult, learning_rate, TrainConfig
from export.wordlm import EOS_ID

WORDS = "the cat sat on a mat and the dog ran to the big red ball while lily sang".split()


@pytest.fixture(scope="module")
def tiny_data(tmp_path_factory):
    rng = np.random.default_rng(0)
    folder = tmp_path_factory.mktemp("tiny")
    stories = []
    for i in range(30):
        n = int(rng.integers(5, 25))
        words = [WORDS[j] for j in rng.integers(0, len(WORDS), n)]
        stories.append(" ".join(words).capitalize() + ". " + ("It was fun!" if i % 2 else "The end."))
    path = folder / "tiny.txt"
    path.write_text("".join(s + "\n<|endoftext|>\n" for s in stories))
    return path


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "export", *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def tiny_protocol(tiny_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    runs = out / "runs"
    common = [
        "--data",
        str(tiny_data),
        "--runs",
        str(runs),
        "--updates",
        "12",
        "--batch-size",
        "16",
        "--seeds",
        "11,29",
        "--eval-every",
        "4",
        "--vocab-size",
        "24",
        "--context",
        "8",
        "--no-progress",
    ]
    first = run_cli(
        "run", "vocab", "tokenizer_vectors", "train", "measure", "evidence", *common, "--out", str(out / "assets")
    )
    assert first.returncode == 0, first.stderr
    second = run_cli("train", *common)
    assert second.returncode == 0, second.stderr
    return out, first, second


def test_tiny_protocol_writes_valid_evidence(tiny_protocol):
    out, first, _ = tiny_protocol
    evidence = json.loads((out / "assets" / "evidence.json").read_text())
    validate(evidence)
    assert evidence["schema"] == SCHEMA
    assert len(evidence["runs"]) == 6  # 3 models x 2 seeds
    assert {r["model"] for r in evidence["runs"]} == {"mlp", "one_head", "four_heads"}
    for r in evidence["runs"]:
        assert [u for u, _ in r["trace"]] == [4, 8, 12]
        assert r["val_loss"] == min(v for _, v in r["trace"])
        assert r["best_update"] in (4, 8, 12)
        assert r["test_perplexity"] == pytest.approx(math.exp(r["test_loss"]))
    assert evidence["source"]["capped"] is True  # 30 stories < 6000 requested
    assert "capped" in first.stdout or "fewer" in first.stdout
    assert set(evidence["preset"]["continuations"]) == {"mlp", "one_head", "four_heads"}
    for name in ("vocab.json", "tokenizer_vectors.json", "validation_traces.svg"):
        assert (out / "assets" / name).stat().st_size > 0


def test_window_count_identity_in_the_audit(tiny_protocol):
    out, _, _ = tiny_protocol
    evidence = json.loads((out / "assets" / "evidence.json").read_text())
    total_stories = 0
    for split, audit in evidence["audit"].items():
        assert audit["windows"] == audit["tokens"] + audit["stories"]
        assert len(evidence["split"]["rows"][split]) == audit["stories"]
        total_stories += audit["stories"]
    assert total_stories == 30
    rows = [r for split in evidence["split"]["rows"].values() for r in split]
    assert sorted(rows) == list(range(30))  # every story in exactly one split


def test_second_run_resumes_instead_of_retraining(tiny_protocol):
    _, _, second = tiny_protocol
    assert second.stdout.count("already trained") == len(MODEL_NAMES) * 2  # every registry model, two seeds


def test_checkpoints_reload_and_damaged_ones_are_refused(tiny_protocol, tmp_path):
    out, _, _ = tiny_protocol
    model = load_checkpoint(out / "runs" / "four_heads-seed11" / "best.pt")
    assert isinstance(model, MultiHeadAttentionLM) and model.heads == 4
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint at all")
    with pytest.raises(ValueError, match="damaged"):
        load_checkpoint(bad)
    cut = tmp_path / "cut.pt"
    cut.write_bytes((out / "runs" / "mlp-seed11" / "best.pt").read_bytes()[:500])
    with pytest.raises(ValueError, match="damaged"):
        load_checkpoint(cut)


def result(model, seed, loss):
    return RunResult(
        model=model,
        seed=seed,
        parameters=10,
        best_update=1,
        val_loss=loss,
        test_loss=loss,
        test_perplexity=math.exp(loss),
        train_seconds=seed,
        updates=1,
        batch_size=1,
    )


def test_aggregate_exponentiates_each_run_then_uses_sample_sd():
    losses = {"one_head": [3.40, 3.45, 3.38], "four_heads": [3.30, 3.36, 3.31]}
    runs = [result(m, s, l) for m, ls in losses.items() for s, l in zip((11, 29, 47), ls)]
    agg = aggregate(runs)
    for m, ls in losses.items():
        ppl = [math.exp(l) for l in ls]
        mean = sum(ppl) / 3
        assert agg[m]["perplexity_mean"] == pytest.approx(mean)
        assert agg[m]["perplexity_sd"] == pytest.approx(math.sqrt(sum((p - mean) ** 2 for p in ppl) / 2))
        assert agg[m]["perplexity_mean"] != pytest.approx(math.exp(statistics.fmean(ls)), rel=1e-6)
    change = relative_change(agg)
    assert change == pytest.approx(agg["four_heads"]["perplexity_mean"] / agg["one_head"]["perplexity_mean"] - 1)
    assert change < 0


def test_learning_rate_warms_up_then_decays():
    cfg = TrainConfig(updates=1000, warmup=100)
    assert learning_rate(cfg, 0) == pytest.approx(cfg.lr / 100)
    assert learning_rate(cfg, 99) == pytest.approx(cfg.lr)
    assert learning_rate(cfg, 999) == pytest.approx(cfg.lr * cfg.min_lr_ratio)
    assert all(learning_rate(cfg, u) >= learning_rate(cfg, u + 1) for u in range(100, 999))


def test_preset_prompt_takes_whole_sentences():
    assert (
        preset_prompt("Tom had a dog. It was big and brown and fun. Then more.")
        == "Tom had a dog. It was big and brown and fun."
    )


class FixedScores(torch.nn.Module):
    """A fake model whose scores are set per step, to test the generation rules."""

    def __init__(self, rows, T=8):
        super().__init__()
        self.rows, self.T, self.seen, self.step = rows, T, [], 0

    def forward(self, x):
        self.seen.append(x[0].tolist())
        row = self.rows[min(self.step, len(self.rows) - 1)]
        self.step += 1
        return torch.tensor([row], dtype=torch.float32)


def test_generation_never_emits_pad_bos_unk_and_stops_on_eos():
    favourite_specials = [10.0, 9.0, 0.0, 8.0, 1.0, 0.5]  # PAD, BOS, UNK score highest but are excluded
    model = FixedScores([favourite_specials, [0, 0, 5.0, 0, 1, 0]])
    ids, ended = generate_ids(model, [1, 5], max_new_tokens=10)
    assert ids == [4] and ended  # then EOS ends it, and EOS is not part of the output
    assert model.seen[0] == [0, 0, 0, 0, 0, 0, 1, 5]  # left-padded to T
    assert model.seen[1] == [0, 0, 0, 0, 0, 1, 5, 4]


def test_generation_crops_history_and_respects_the_limit():
    model = FixedScores([[0, 0, 0, 0, 1.0, 2.0]])
    ids, ended = generate_ids(model, list(range(1, 12)), max_new_tokens=3)
    assert ids == [5, 5, 5] and not ended
    assert model.seen[0] == list(range(4, 12))  # only the last T = 8 ids
    with pytest.raises(ValueError):
        generate_ids(model, [1], max_new_tokens=0)
    with pytest.raises(ValueError):
        generate_ids(model, [1], max_new_tokens=65)


def test_sampling_is_reproducible_and_follows_the_distribution():
    logits = np.log(np.array([1, 1, 1, 1, 2, 6, 2], dtype=float))
    draws = [choose_next(logits, 1.0, rng) for rng in [Mulberry32(7)] for _ in range(2000)]
    again = [choose_next(logits, 1.0, rng) for rng in [Mulberry32(7)] for _ in range(2000)]
    assert draws == again
    assert not set(draws) & set(EXCLUDED_IDS)
    share = draws.count(5) / len(draws)
    assert 0.50 < share < 0.59  # allowed ids 2, 4, 5, 6 weigh 1, 2, 6, 2: id 5 has 6 / 11
    assert choose_next(logits, 0.0) == 5
    with pytest.raises(ValueError):
        choose_next(np.array([0, 0, np.nan, 0, 0.0]))


def test_mulberry32_matches_the_browser_generator():
    # the same seed printed these values from site_src/js/runtime/rng.js under Node
    r = Mulberry32(42)
    assert [round(r.random(), 12) for _ in range(3)] == [0.60110375192, 0.448290558998, 0.85246579349]


def test_eos_id_is_two():
    assert EOS_ID == 2


def test_onnx_rebuild_writes_only_its_report_and_the_evidence_stage_takes_its_sizes(tiny_protocol, tiny_data, tmp_path):
    """`onnx --from-checkpoints` leaves evidence.json alone; `evidence` afterwards carries the rebuilt sizes."""
    import shutil

    from export.artefacts import onnx_rebuild
    from export.evidence import rebuilt_onnx_sizes

    out = tmp_path / "out"
    shutil.copytree(tiny_protocol[0], out)
    assets, runs = out / "assets", out / "runs"
    data = ["--data", str(tiny_data), "--vocab-size", "24", "--context", "8"]
    common = [
        *data,
        "--runs",
        str(runs),
        "--updates",
        "12",
        "--batch-size",
        "16",
        "--seeds",
        "11,29",
        "--eval-every",
        "4",
        "--no-progress",
        "--out",
        str(assets),
    ]
    first = run_cli("run", "onnx", "measure", "evidence", *common)
    assert first.returncode == 0, first.stderr
    # The measurements say other sizes than the files have: only the rebuild's report can put them right.
    measured = json.loads((runs / "measurements.json").read_text())
    for entry in measured["onnx"].values():
        entry["bytes"] = entry["float32_bytes"] = 1
    (runs / "measurements.json").write_text(json.dumps(measured))
    before = (assets / "evidence.json").read_bytes()

    rebuild = run_cli(
        "onnx", "--from-checkpoints", str(assets / "checkpoints"), *data, "--runs", str(runs), "--out", str(assets)
    )
    assert rebuild.returncode == 0, rebuild.stderr
    assert (assets / "evidence.json").read_bytes() == before  # the rebuild writes only its own outputs
    report = json.loads(onnx_rebuild(runs).read_text())
    assert set(report["models"]) == {"mlp", "one_head", "four_heads"}

    assembled = run_cli("evidence", *common)
    assert assembled.returncode == 0, assembled.stderr
    evidence = json.loads((assets / "evidence.json").read_text())
    manifest = json.loads((assets / "models" / "manifest.json").read_text())
    for entry in manifest["models"]:
        onnx = evidence["onnx"][entry["name"]]
        assert onnx["bytes"] == entry["bytes"] == (assets / entry["file"]).stat().st_size
        assert onnx["float32_bytes"] == report["models"][entry["name"]]["float32_bytes"] > 1

    # A file written after the rebuild (a full `onnx` run) is not the rebuild's: its sizes are not taken.
    (assets / "models" / "mlp.onnx").write_bytes(b"another export")
    again = rebuilt_onnx_sizes(measured, assets, runs)
    assert again["onnx"]["mlp"]["bytes"] == 1 and again["onnx"]["four_heads"]["bytes"] > 1
