"""The tracked run records (records/runs/): written from the evidence once, kept by `make extra-seeds`,
and enough for the sweep and the evidence stages to rebuild their files byte for byte without runs/."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from export import run_records
from export.artefacts import RECORDS_DIR, Artefacts, run_record
from export.defaults import EXTRA_SEEDS, SEEDS
from export.models import MODEL_NAMES
from export.train import RunResult

ROOT = Path(__file__).resolve().parents[2]
WORDS = "the cat sat on a mat and the dog ran to the big red ball while lily sang".split()
TINY = "--updates 4 --batch-size 8 --eval-every 2 --vocab-size 24 --context 8"


def run(*args, cwd=ROOT, **kw):
    return subprocess.run(
        [*map(str, args)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=cwd,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        **kw,
    )


def test_the_source_seeds_records_are_the_runs_the_evidence_embeds(tmp_path):
    done = run(sys.executable, "-m", "export.run_records", "from-evidence", "--records", tmp_path)
    assert done.returncode == 0, done.stderr
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted(run_record("", m, s).name for m in MODEL_NAMES for s in SEEDS)
    for name in written:  # the committed record holds the same run (and may also say when it ran)
        mine, committed = json.loads((tmp_path / name).read_text()), json.loads((RECORDS_DIR / name).read_text())
        assert RunResult(**mine).record() == RunResult(**committed).record(), name


def _rebuild(tmp: Path, records: Path) -> tuple[bytes, bytes]:
    """The sweep and evidence stages run on ``records`` alone (an empty runs folder) in a copy of wasm_assets."""
    out = tmp / "out"
    out.mkdir()
    for name in ("evidence.json", "heads.json", "head_sweep.json"):  # evidence: the measurements; sweep: its timing
        shutil.copy(Artefacts().root / name, out / name)
    for stage in ("sweep", "evidence"):
        done = run(sys.executable, "-m", "export", stage, "--out", out, "--runs", tmp / "no-runs", "--records", records)
        assert done.returncode == 0, done.stderr
    return (out / "head_sweep.json").read_bytes(), (out / "evidence.json").read_bytes()


def test_the_sweep_and_the_evidence_rebuild_from_the_records_byte_for_byte(tmp_path):
    sweep, evidence = _rebuild(tmp_path, RECORDS_DIR)
    assert sweep == Artefacts().head_sweep.read_bytes()
    assert evidence == Artefacts().evidence.read_bytes()


def test_the_source_seeds_records_alone_rebuild_the_headline(tmp_path):
    """With only the source's three seeds recorded, the source-seed parts are the committed ones; the extra
    seeds' parts are empty (and the whole files are the committed ones while no extra seed has finished)."""
    records = tmp_path / "records"
    records.mkdir()
    for path in RECORDS_DIR.glob("*.json"):
        if RunResult(**json.loads(path.read_text())).seed in SEEDS:
            shutil.copy(path, records / path.name)
    sweep_bytes, evidence_bytes = _rebuild(tmp_path, records)
    sweep, evidence = json.loads(sweep_bytes), json.loads(evidence_bytes)
    committed_sweep = json.loads(Artefacts().head_sweep.read_text())
    committed = json.loads(Artefacts().evidence.read_text())
    if not any(m["extra_runs"] for m in committed_sweep["models"]) and not committed["paired"]["extra_runs"]:
        assert sweep_bytes == Artefacts().head_sweep.read_bytes()
        assert evidence_bytes == Artefacts().evidence.read_bytes()
    for mine, theirs in zip(sweep["models"], committed_sweep["models"]):
        assert mine["extra_runs"] == [] and {k: v for k, v in mine.items() if k != "extra_runs"} == {
            k: v for k, v in theirs.items() if k != "extra_runs"
        }
    assert sweep["findings"]["paired"]["source"] == committed_sweep["findings"]["paired"]["source"]
    for key in ("runs", "aggregates", "comparison"):
        assert evidence[key] == committed[key], key
    assert evidence["paired"]["source"] == committed["paired"]["source"]
    assert evidence["paired"]["extra_runs"] == []


def test_an_extra_seed_trained_otherwise_is_left_out(tmp_path):
    like = RunResult(**json.loads(run_record(RECORDS_DIR, "four_heads", SEEDS[0]).read_text()))
    odd = json.loads(run_record(RECORDS_DIR, "four_heads", SEEDS[0]).read_text())
    odd["seed"], odd["key"] = EXTRA_SEEDS[0], {**odd["key"], "updates": 4}
    run_records.write(tmp_path, odd)
    assert run_records.read_optional(["four_heads"], EXTRA_SEEDS, like, tmp_path) == []
    odd["key"] = like.key
    run_records.write(tmp_path, odd)
    assert [r.seed for r in run_records.read_optional(["four_heads"], EXTRA_SEEDS, like, tmp_path)] == [EXTRA_SEEDS[0]]


def test_the_extra_runs_are_every_model_once_per_extra_seed():
    names = run_records.extra_runs()
    assert sorted(names) == sorted(f"{m}-seed{s}" for m in MODEL_NAMES for s in EXTRA_SEEDS)
    assert names[0] == f"four_heads-seed{EXTRA_SEEDS[0]}"  # the reference of every comparison first


@pytest.mark.slow
def test_make_records_a_run_on_one_thread_and_resumes(tmp_path):
    """`make record-<run>` (what `make -j2 extra-seeds` runs per run): trains, copies the record, and a
    second call trains nothing."""
    data = tmp_path / "tiny.txt"
    data.write_text(
        "".join(
            " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(6 + i % 9)).capitalize()
            + ". The end.\n<|endoftext|>\n"
            for i in range(30)
        )
    )
    runs, records = tmp_path / "runs", tmp_path / "records"
    target = f"record-four_heads-seed{EXTRA_SEEDS[0]}"
    args = [
        "make",
        "-o",
        ".venv/ready",
        target,
        f"DATA={data}",
        f"RUNS={runs}",
        f"RECORDS={records}",
        f"PROTOCOL={TINY}",
    ]
    first = run(*args)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    assert "OMP_NUM_THREADS=1" in first.stdout and "--threads 1" in first.stdout
    result = runs / f"four_heads-seed{EXTRA_SEEDS[0]}" / "result.json"
    record = run_record(records, "four_heads", EXTRA_SEEDS[0])
    assert json.loads(record.read_text()) == json.loads(result.read_text())
    second = run(*args)
    assert second.returncode == 0 and "already trained" in second.stdout
