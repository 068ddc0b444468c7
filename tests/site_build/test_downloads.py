"""The lesson's downloads: an archive that runs as downloaded, and the notebook with its outputs."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from export.artefacts import Artefacts

ROOT = Path(__file__).resolve().parents[2]
SAVED_NOTEBOOK = ROOT / "wasm_assets/mha-lesson.ipynb"


def _hook():
    spec = importlib.util.spec_from_file_location("downloads_hook", ROOT / "site_src/hooks/downloads.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _code(nb: dict) -> list[str]:
    return [
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in nb["cells"]
        if c["cell_type"] == "code"
    ]


def test_site_has_both_downloads_and_links_them(built_site):
    zpath = built_site / "downloads/mha-lesson.zip"
    nb = built_site / "downloads/mha-lesson.ipynb"
    assert zpath.is_file() and nb.is_file()
    assert nb.read_bytes() == SAVED_NOTEBOOK.read_bytes()
    with zipfile.ZipFile(zpath) as zf:
        names = set(zf.namelist())
        assert zf.testzip() is None
        for src in (ROOT / "export").rglob("*.py"):
            if "__pycache__" in src.parts:
                continue
            name = f"mha-lesson/export/{src.relative_to(ROOT / 'export').as_posix()}"
            assert name in names
            assert zf.read(name) == src.read_bytes()
        art = Artefacts()
        for asset in _hook().asset_files(art):
            name = f"mha-lesson/wasm_assets/{asset.relative_to(art.root).as_posix()}"
            assert zf.read(name) == asset.read_bytes()
        assert zf.read("mha-lesson/mha-lesson.ipynb") == SAVED_NOTEBOOK.read_bytes()
        readme = zf.read("mha-lesson/README.md").decode()
        assert "pip install -r requirements.txt" in readme and "--execute mha-lesson.ipynb" in readme
        reqs = zf.read("mha-lesson/requirements.txt").decode().split()
        assert "torch==2.13.0" in reqs and any(r.startswith("nbclient==") for r in reqs)
    for page in ("credits/index.html", "lesson/4-model-training-generation/index.html"):
        text = (built_site / page).read_text()
        assert "downloads/mha-lesson.zip" in text and "downloads/mha-lesson.ipynb" in text, page


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
    for needed in (
        "lily_example",
        "load_compact",
        "forward_full",
        "cross_entropy",
        "worksheet.compute",
        "generate_text",
    ):
        assert needed in sources


def test_saved_notebook_has_outputs_and_current_code():
    """The shipped notebook was run, and from the code build_notebook() writes today."""
    from export.lesson.notebook import build_notebook, outputs_text

    saved = json.loads(SAVED_NOTEBOOK.read_text())
    assert _code(saved) == _code(build_notebook()), (
        "wasm_assets/mha-lesson.ipynb is older than export/lesson/notebook.py: run "
        "`python -m export.lesson.notebook --execute wasm_assets/mha-lesson.ipynb`"
    )
    code_cells = [c for c in saved["cells"] if c["cell_type"] == "code"]
    assert all(c["outputs"] for c in code_cells), "a code cell has no saved output"
    assert not any(o.get("output_type") == "error" for c in code_cells for o in c["outputs"])
    assert str(ROOT) not in SAVED_NOTEBOOK.read_text(), "the saved outputs show a path of the build machine"
    _check_printed_numbers(outputs_text(saved))


def _check_printed_numbers(printed: str) -> None:
    """What the notebook printed, against evidence.json and walkthrough.json."""
    evidence = json.loads((ROOT / "wasm_assets/evidence.json").read_text())
    walk = json.loads((ROOT / "wasm_assets/walkthrough.json").read_text())
    for model in evidence["protocol"]["models"]:
        m = re.search(rf"^{model} parameters: (\d+) ", printed, re.M)
        assert m and int(m.group(1)) == evidence["aggregates"][model]["parameters"], model
        m = re.search(rf"^{model} continuation: (.*)$", printed, re.M)
        assert m and m.group(1) == evidence["preset"]["continuations"][model]["text"], model
        assert f"{model} continuation equals the saved one: True" in printed
    loss = float(re.search(r"^loss: ([0-9.]+)", printed, re.M).group(1))
    assert loss == pytest.approx(walk["loss"], abs=1e-5)  # float32 sums in another order
    assert "greedy next token: " + evidence["preset"]["continuations"]["four_heads"]["tokens"][0] in printed


@pytest.mark.slow
@pytest.mark.timeout(1800)  # installing torch into a new venv takes minutes on a busy 2-core machine
def test_archive_runs_in_a_fresh_venv(built_site, tmp_path):
    """Unpack into an empty folder and run the README's one command there: a new venv (no system
    packages) from the archive's requirements.txt, then the notebook in a fresh kernel."""
    from export.lesson.notebook import outputs_text

    with zipfile.ZipFile(built_site / "downloads/mha-lesson.zip") as zf:
        zf.extractall(tmp_path)
    folder = tmp_path / "mha-lesson"
    (folder / "mha-lesson.ipynb").unlink()  # the command must write it again, with new outputs
    readme = (folder / "README.md").read_text()
    command = next(line.strip() for line in readme.splitlines() if line.strip().startswith("python3 -m venv"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    env["OMP_NUM_THREADS"] = "1"
    proc = subprocess.run(["bash", "-c", command], cwd=folder, env=env, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-3000:])
    cfg = (folder / ".venv/pyvenv.cfg").read_text()
    assert "include-system-site-packages = false" in cfg
    ran = json.loads((folder / "mha-lesson.ipynb").read_text())
    _check_printed_numbers(outputs_text(ran))
