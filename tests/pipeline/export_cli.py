"""``python -m export`` as the tests call it: in this process (fast) or in a process of its own (the door itself)."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import torch

from export.__main__ import main as export_main

ROOT = Path(__file__).resolve().parents[2]


def cli_process(*args, cwd=ROOT):
    """``python -m export ARGS`` in a process of its own: the door itself, exit status included."""
    return subprocess.run(
        [sys.executable, "-m", "export", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )


def cli(*args, cwd=ROOT):
    """``python -m export ARGS`` run by its main() in this process, with what it prints and its exit status.

    A process per case spent about 2 s importing torch, 40 times over; cli_process() keeps the
    door itself tested. An exception main() lets through fails the test here, as its traceback
    would in a process. One torch thread, as the processes had, and the process's own number of
    threads, random state and folder are given back after.
    """
    out, err = io.StringIO(), io.StringIO()
    threads, rng = torch.get_num_threads(), torch.random.get_rng_state()
    torch.set_num_threads(1)
    try:
        with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = export_main([str(a) for a in args])
            except SystemExit as exc:  # argparse and the option checks leave this way
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        torch.set_num_threads(threads)
        torch.random.set_rng_state(rng)
    return subprocess.CompletedProcess(
        ["python", "-m", "export", *map(str, args)], code, out.getvalue(), err.getvalue()
    )


def assert_refused(proc, *words):
    """Exit status 2 and exactly one line on stderr that names the problem."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    message = proc.stderr.strip()
    assert message.startswith("error: ") and "\n" not in message, message
    assert "Traceback" not in proc.stderr
    for word in words:
        assert word in message, message
