"""The lesson's downloads: the export/ archive and the generated notebook."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _hook():
    spec = importlib.util.spec_from_file_location("downloads_hook", ROOT / "site_src/hooks/downloads.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_site_has_both_downloads_and_links_them(built_site):
    zpath = built_site / "downloads/mha-export.zip"
    nb = built_site / "downloads/mha-lesson.ipynb"
    assert zpath.is_file() and nb.is_file()
    with zipfile.ZipFile(zpath) as zf:
        names = set(zf.namelist())
        assert zf.testzip() is None
        for src in (ROOT / "export").rglob("*.py"):
            if "__pycache__" in src.parts:
                continue
            name = f"mha-export/export/{src.relative_to(ROOT / 'export').as_posix()}"
            assert name in names
            assert zf.read(name) == src.read_bytes()
    credits = (built_site / "credits/index.html").read_text()
    assert "../downloads/mha-export.zip" in credits and "../downloads/mha-lesson.ipynb" in credits


def test_archive_is_deterministic(tmp_path):
    hook = _hook()
    a = hook.build_zip(tmp_path / "a.zip").read_bytes()
    b = hook.build_zip(tmp_path / "b.zip").read_bytes()
    assert a == b


def test_notebook_is_valid_nbformat():
    from export.lesson.notebook import build_notebook

    nb = build_notebook()
    json.loads(json.dumps(nb))  # plain JSON
    nbformat = pytest.importorskip("nbformat")
    nbformat.validate(nbformat.from_dict(nb))
    sources = "\n".join(c["source"] for c in nb["cells"])
    for needed in ("lily_example", "load_compact", "forward_full", "cross_entropy"):
        assert needed in sources


@pytest.mark.slow
def test_notebook_code_runs_top_to_bottom(tmp_path, assets_dir):
    """Every code cell, in order, in one fresh interpreter, from a folder inside the lesson."""
    from export.lesson.notebook import build_notebook, code_cells

    if not (assets_dir / "checkpoints/four_heads-seed11.pt").is_file():
        pytest.skip("the shipped checkpoint is not there yet (make models)")
    script = tmp_path / "notebook.py"
    script.write_text("\n\n".join(code_cells(build_notebook())))
    env = {**os.environ, "MHA_LESSON_DIR": str(ROOT)}
    if assets_dir != ROOT / "wasm_assets":
        pytest.skip("the notebook reads the lesson folder's own wasm_assets/")
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "loss:" in proc.stdout and "greedy next token:" in proc.stdout
