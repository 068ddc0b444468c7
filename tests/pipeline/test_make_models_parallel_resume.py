"""`make -j3 models` on a tiny protocol: one Make target per run, three at a time, and it resumes.

No scheduler of our own: Make starts the runs (``run-<model>-seed<seed>``), each
one command writing one run folder; a finished run is skipped by the command.
Make prints a command as it starts it, and the commands' own output (buffered,
to a pipe) comes when they end, so three run commands printed before the first
run's result line means the three ran at once.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from export.models import MODEL_NAMES

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "tinystories" / "TinyStories-train-head.txt"
# Small enough for a couple of minutes on a shared machine, big enough that the lesson's words
# (page 3's Lily sentence) are in the vocabulary.
PROTOCOL = (
    "--stories 600 --updates 6 --batch-size 8 --eval-every 3 --vocab-size 800 --context 8 --seeds 11 --toy-steps 5"
)
MODELS = MODEL_NAMES  # every registry model is one run per seed (mlp first)


def _make(tmp: Path) -> subprocess.CompletedProcess:
    # -o .venv/ready: use the environment as it is (never reinstall it from a test)
    cmd = [
        "make",
        "-o",
        ".venv/ready",
        "-j3",
        "models",
        f"DATA={DATA}",
        f"RUNS={tmp / 'runs'}",
        f"OUT={tmp / 'out'}",
        f"PROTOCOL={PROTOCOL}",
    ]
    return subprocess.run(
        cmd, cwd=ROOT, capture_output=True, text=True, timeout=1200, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )


@pytest.mark.slow
def test_make_j3_models_trains_three_runs_at_once_and_resumes(tmp_path):
    if not DATA.is_file():
        pytest.skip(f"{DATA} is not here (the stories live in ../shared/data)")
    first = _make(tmp_path)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    lines = first.stdout.splitlines()
    started = [i for i, l in enumerate(lines) if re.search(r"--models (\w+) --seeds 11$", l)]
    first_done = next(i for i, l in enumerate(lines) if re.match(r"\w+ seed 11: best update", l))
    # three at a time: three runs start before any ends, the fourth only once one has ended
    assert len(started) == len(MODELS) > 3 and started[2] < first_done < started[3], "\n".join(lines[:40])
    for name in MODELS:
        assert (tmp_path / "runs" / f"{name}-seed11" / "result.json").is_file()
    for name in (
        "evidence.json",
        "page_data.json",
        "models/manifest.json",
        "heads.json",
        "walkthrough.json",
        "toy_task.json",
        "head_growth.json",
    ):
        assert (tmp_path / "out" / name).is_file(), name
    assert not list((tmp_path / "runs").rglob("claimed.pid"))

    # Interrupted: one run's folder is gone. The next `make -j3 models` trains only that one.
    kept = {n: (tmp_path / "runs" / f"{n}-seed11" / "result.json").stat().st_mtime_ns for n in MODELS[1:]}
    shutil.rmtree(tmp_path / "runs" / "mlp-seed11")
    second = _make(tmp_path)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    assert re.search(r"^mlp seed 11: best update", second.stdout, re.M)
    for name in MODELS[1:]:
        assert re.search(rf"^{name} seed 11: already trained", second.stdout, re.M), name
        assert (tmp_path / "runs" / f"{name}-seed11" / "result.json").stat().st_mtime_ns == kept[name]
