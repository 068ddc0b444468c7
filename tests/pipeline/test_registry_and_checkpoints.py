"""The model registry and checkpoints: a new model is one registry line, and loading never guesses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from export import models
from export.checkpoints import CheckpointError, load_checkpoint, load_compact, load_full, save_compact, save_full
from export.corpus import prepare_corpus
from export.data import load_stories
from export.evidence import read_onnx_report, write_all
from export.vocabulary import write_vocabulary
from export.models import MODELS, ModelSpec, count_parameters
from export.onnx_export import export_all, feeds, session
from export.protocol import run_protocol
from export.train import TrainConfig

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "wasm_assets"
WORDS = "the cat sat on a mat and the dog ran to the big red ball while lily sang".split()
# A model the registry does not hold (its two_heads is 64 wide).
EXTRA = ModelSpec("two_narrow_heads", "Two narrow heads", "attention", heads=2, d_model=32, colour="#999999")


def tiny_stories(path: Path, n: int = 30) -> Path:
    rng = np.random.default_rng(0)
    stories = []
    for i in range(n):
        words = [WORDS[j] for j in rng.integers(0, len(WORDS), int(rng.integers(5, 25)))]
        stories.append(" ".join(words).capitalize() + ". " + ("It was fun!" if i % 2 else "The end."))
    path.write_text("".join(s + "\n<|endoftext|>\n" for s in stories))
    return path


def test_registry_lists_each_model_once_with_its_sizes():
    assert [s.name for s in MODELS] == ["mlp", "one_head", "four_heads", "two_heads", "eight_heads", "sixteen_heads"]
    assert [(s.kind, s.heads, s.d_model, s.hidden) for s in MODELS] == [
        ("mlp", 0, 64, 256),
        ("attention", 1, 64, 256),
        ("attention", 4, 64, 256),
        ("attention", 2, 64, 256),
        ("attention", 8, 64, 256),
        ("attention", 16, 64, 256),
    ]
    assert models.MODEL_LABELS == {
        "mlp": "MLP",
        "one_head": "One head",
        "four_heads": "Four heads",
        "two_heads": "Two heads",
        "eight_heads": "Eight heads",
        "sixteen_heads": "Sixteen heads",
    }
    # Only these reach the browser; the sweep's others are trained and measured (page 5).
    assert [s.name for s in models.shipped_models()] == ["mlp", "one_head", "four_heads"]
    with pytest.raises(ValueError, match="divide"):
        ModelSpec("three_heads", "Three heads", "attention", heads=3)
    with pytest.raises(ValueError, match="unknown model"):
        models.get_spec("two_narrow_heads")


def test_a_new_model_is_one_registry_line(tmp_path, monkeypatch):
    """Register a spec made here, then train, resume, save, load and export it with the pipeline's own code."""
    monkeypatch.setitem(models.REGISTRY, EXTRA.name, EXTRA)  # the one line in export/models.py
    source = load_stories(tiny_stories(tmp_path / "tiny.txt"), 30, log=lambda m: None)
    corpus = prepare_corpus(source, C=24, T=8)
    cfg = TrainConfig(
        updates=6, batch_size=8, seeds=(11,), models=("two_narrow_heads",), eval_every=3, selection_windows=64
    )
    runs, out, log = tmp_path / "runs", tmp_path / "assets", []
    [result] = run_protocol(corpus, cfg, runs, progress=False, log=log.append)
    assert result.model == "two_narrow_heads" and [u for u, _ in result.trace] == [3, 6]

    model = load_checkpoint(runs / "two_narrow_heads-seed11" / "best.pt")
    assert model.spec == EXTRA and model.heads == 2 and (model.C, model.T) == (24, 8)
    assert count_parameters(model) == result.parameters
    run_protocol(corpus, cfg, runs, progress=False, log=log.append)
    assert "already trained" in log[-1]

    write_vocabulary(corpus, out, log=lambda m: None)
    report = export_all(corpus, runs, out, models=("two_narrow_heads",), log=lambda m: None)
    assert set(report["models"]) == {"two_narrow_heads"}
    manifest = json.loads((out / "models" / "manifest.json").read_text())
    [entry] = manifest["models"]
    assert {k: entry[k] for k in ("name", "label", "kind", "heads", "head_dim", "outputs")} == {
        "name": "two_narrow_heads",
        "label": "Two narrow heads",
        "kind": "attention",
        "heads": 2,
        "head_dim": 16,
        "outputs": ["logits", "attention"],
    }
    assert entry["inputs"] == ["ids", "head_mask"]
    assert (manifest["C"], manifest["T"]) == (24, 8)

    shipped = load_compact(out / "checkpoints" / "two_narrow_heads-seed11.pt")
    assert shipped.spec == EXTRA
    sess = session((out / "models" / "two_narrow_heads.onnx").read_bytes())
    x = corpus.windows["test"].all()[0][:16]
    logits, attention = sess.run(["logits", "attention"], feeds(sess, x.numpy()))  # head_mask: all ones
    with torch.no_grad():
        ref_logits, ref_attention = shipped(x, return_attention=True)
    assert attention.shape == (16, 2, 8)
    assert np.abs(logits - ref_logits.numpy()).max() <= 1e-4
    assert np.abs(attention - ref_attention.numpy()).max() <= 1e-5

    # The evidence stage is the one writer of evidence.json; it takes the ONNX stage's report from the runs folder.
    evidence = write_all(corpus, cfg, [result], runs, out, log=lambda m: None, onnx_report=read_onnx_report(runs))
    assert json.loads((out / "evidence.json").read_text()) == json.loads(json.dumps(evidence))
    assert evidence["onnx"] == report["models"] and evidence["protocol"]["heads"] == {"two_narrow_heads": 2}
    assert evidence["preset"]["continuations"]["two_narrow_heads"]["ids"]
    ckpt = runs / "two_narrow_heads-seed11" / "best.pt"
    ckpt.write_bytes(ckpt.read_bytes() + b"changed")
    with pytest.raises(ValueError, match="run `python -m export onnx` again"):
        read_onnx_report(runs)


def test_both_checkpoint_formats_load_and_name_their_model(tmp_path):
    torch.manual_seed(0)
    spec = models.get_spec("four_heads")
    model = spec.build(30, 6).eval()
    save_full(tmp_path / "full.pt", spec, model, "abc")
    save_compact(tmp_path / "compact.pt", spec, model, "float16")
    full, compact = load_checkpoint(tmp_path / "full.pt"), load_checkpoint(tmp_path / "compact.pt")
    assert full.spec == compact.spec == spec
    assert (full.encoding, compact.encoding, full.vocab_fingerprint) == ("float32", "float16", "abc")
    x = torch.randint(0, 30, (3, 6))
    with torch.no_grad():
        assert torch.equal(full(x), model(x))
    with pytest.raises(CheckpointError, match="full checkpoint, not a compact"):
        load_compact(tmp_path / "full.pt")
    with pytest.raises(CheckpointError, match="compact checkpoint, not a full"):
        load_full(tmp_path / "compact.pt")


def test_loading_never_guesses_the_model(tmp_path):
    # A format-1 file (config only) with two 16-wide heads matches no registry model: refused, not loaded as one_head.
    model = EXTRA.build(30, 6)
    torch.save({"config": model.config(), "state_dict": model.state_dict()}, tmp_path / "old.pt")
    with pytest.raises(CheckpointError, match="0 registry models"):
        load_checkpoint(tmp_path / "old.pt")
    # A file that calls itself one_head but holds four heads is refused too.
    lying = ModelSpec("one_head", "One head", "attention", heads=4)
    save_full(tmp_path / "lying.pt", lying, lying.build(30, 6))
    with pytest.raises(CheckpointError, match="sizes differ"):
        load_checkpoint(tmp_path / "lying.pt")


@pytest.mark.parametrize("name", ["mlp", "one_head", "four_heads"])
def test_shipped_compact_checkpoints_load_as_their_registry_spec(name):
    model = load_compact(ASSETS / "checkpoints" / f"{name}-seed11.pt")
    assert model.spec == models.get_spec(name)
    manifest = json.loads((ASSETS / "models" / "manifest.json").read_text())
    entry = next(m for m in manifest["models"] if m["name"] == name)
    assert entry["parameters"] == count_parameters(model)
    assert (entry["kind"], entry["heads"], entry["d_model"], entry["hidden"]) == (
        model.spec.kind,
        model.spec.heads,
        model.spec.d_model,
        model.spec.hidden,
    )


def test_manifest_carries_what_the_site_needs():
    manifest = json.loads((ASSETS / "models" / "manifest.json").read_text())
    vocab = json.loads((ASSETS / "vocab.json").read_text())
    assert [m["name"] for m in manifest["models"]] == [s.name for s in models.shipped_models()]
    assert [m["label"] for m in manifest["models"]] == [s.label for s in models.shipped_models()]
    assert (manifest["C"], manifest["T"], manifest["special"]) == (vocab["C"], vocab["T"], vocab["special"])
    assert manifest["preset"]["seed"] == 11 and manifest["preset"]["max_new_tokens"] == 24
    assert manifest["generation"]["excluded_ids"] == [0, 1, 3]


def test_manifest_is_written_again_from_the_shipped_files_alone(tmp_path):
    out = tmp_path / "assets"
    for part in ("models", "checkpoints"):
        (out / part).mkdir(parents=True)
        for f in (ASSETS / part).iterdir():
            if f.suffix in (".onnx", ".pt"):
                (out / part / f.name).write_bytes(f.read_bytes())
    (out / "vocab.json").write_bytes((ASSETS / "vocab.json").read_bytes())
    proc = subprocess.run(
        [sys.executable, "-m", "export", "manifest", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert (out / "models" / "manifest.json").read_text() == (ASSETS / "models" / "manifest.json").read_text()


def test_reading_checkpoints_needs_no_onnx():
    code = (
        "import sys\n"
        "import export.checkpoints, export.lesson.walkthrough, export.lesson.notebook\n"
        "m = export.checkpoints.load_compact('wasm_assets/checkpoints/four_heads-seed11.pt')\n"
        "bad = [n for n in ('onnx', 'onnxruntime') if n in sys.modules]\n"
        "assert not bad, bad\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
