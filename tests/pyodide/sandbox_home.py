"""The Pyodide worker's home, made for a test under CPython as the browser's shared runtime makes it."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYODIDE = ROOT / "site_src" / "pyodide"
MICROGPT = ROOT / "wasm_assets" / "microgpt-trained.json"


@contextmanager
def sandbox_home(tmp_path_factory):
    """A fresh home holding microgpt's model, as the current folder, with site_src/pyodide importable by
    name (the worker's modules import each other so, as in the browser); yields the MonkeyPatch, undone on
    leaving. sandbox.py takes its home from the folder it is first imported in, for every exercise of
    the test session."""
    home = tmp_path_factory.mktemp("pyodide_home")
    (home / MICROGPT.name).write_bytes(MICROGPT.read_bytes())
    mp = pytest.MonkeyPatch()
    try:
        mp.chdir(home)
        mp.syspath_prepend(str(PYODIDE))
        yield mp
    finally:
        mp.undo()
