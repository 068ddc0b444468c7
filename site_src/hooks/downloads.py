"""MkDocs hook: the lesson's downloads, built with the site.

After the pages are written it puts into ``site/downloads/``:

* ``mha-lesson.zip``: a folder ``mha-lesson/`` that runs as downloaded. It
  holds the Python package (every ``export/**/*.py``), what the notebook reads
  from ``wasm_assets/`` (the shipped seed-11 checkpoints, the vocabulary and
  the evidence), the notebook with its outputs, ``requirements.txt`` (exact
  versions of what the notebook imports, as installed where the notebook last
  ran: ``wasm_assets/notebook-requirements.txt``, written with it) and a README with the one command that sets up a virtual
  environment and runs the notebook. Deterministic: sorted names, a fixed
  timestamp and fixed permissions, so the same inputs always give the same bytes.
* ``mha-lesson.ipynb``: the same notebook on its own, saved with its outputs
  (``wasm_assets/mha-lesson.ipynb``, written by
  ``python -m export.lesson.notebook --execute wasm_assets/mha-lesson.ipynb``).
* ``build-it-yourself.ipynb``: the "Build it yourself" exercise as a notebook,
  starters only, its numbers inside it (``wasm_assets/build-it-yourself.ipynb``,
  written by ``python -m export.lesson.build_notebook``).

``tests/site_build/test_downloads.py`` unpacks the archive into an empty folder,
makes a fresh virtual environment from its requirements and runs the notebook
there, comparing what it prints with ``evidence.json``.
"""

from __future__ import annotations

import json
import logging
import zipfile
from pathlib import Path

from mkdocs.exceptions import PluginError

import export.artefacts as artefacts  # standard library only

log = logging.getLogger("mkdocs.hooks.downloads")

ROOT = Path(__file__).resolve().parents[2]
EXPORT = ROOT / "export"
ZIP_NAME = "mha-lesson.zip"
FOLDER = "mha-lesson"
FIXED_TIME = (2024, 1, 1, 0, 0, 0)
README = """# The multi-head attention lesson, runnable

This folder is the lesson's Python side: the package `export/` that trained
the three models and wrote every figure of the site, the shipped seed-11
checkpoints, the vocabulary and `evidence.json` (in `wasm_assets/`), and the
notebook `mha-lesson.ipynb`, saved with the outputs it printed when the site
was built.

## The one command

With Python 3.11 on Linux or macOS, inside this folder:

    python3 -m venv .venv && .venv/bin/pip install -r requirements.txt && .venv/bin/python -m export.lesson.notebook --execute mha-lesson.ipynb

It makes a virtual environment, installs the exact versions in
`requirements.txt` (PyTorch for the CPU is enough), runs every cell of the
notebook in a fresh kernel and saves it again with the new outputs. Its last
cell compares the models' parameter counts and saved continuations with
`wasm_assets/evidence.json`. Open the notebook in Jupyter or VS Code to read it.

`.venv/bin/python -m export --help` lists the pipeline's commands (training
needs the TinyStories file, see the site's Credits page).

TinyStories: Ronen Eldan and Yuanzhi Li (arXiv:2305.07759), CDLA-Sharing-1.0.
"""


def asset_files(art: artefacts.Artefacts) -> list[Path]:
    """What the notebook reads: the evidence, the vocabulary and the shipped models' checkpoints."""
    manifest = json.loads(art.manifest.read_text(encoding="utf-8"))
    return [art.evidence, art.vocab, *(art.checkpoint(m["name"]) for m in manifest["models"])]


def _entries() -> list[tuple[str, bytes]]:
    art = artefacts.Artefacts()
    notebook, pins = art.notebook, art.notebook_requirements
    if not art.manifest.is_file():
        raise PluginError(f"downloads: {art.manifest} is missing; run `make models`")
    files = asset_files(art)
    missing = [str(p) for p in [notebook, pins, *files] if not p.is_file()]
    if missing:
        raise PluginError(
            f"downloads: missing {', '.join(missing)}; run `make models`, then "
            f"`python -m export.lesson.notebook --execute {notebook}`"
        )
    code = sorted(p for p in EXPORT.rglob("*.py") if p.is_file() and "__pycache__" not in p.parts)
    entries = [
        (f"{FOLDER}/README.md", README.encode()),
        (f"{FOLDER}/requirements.txt", pins.read_bytes()),
        (f"{FOLDER}/{notebook.name}", notebook.read_bytes()),
    ]
    entries += [(f"{FOLDER}/export/{p.relative_to(EXPORT).as_posix()}", p.read_bytes()) for p in code]
    entries += [(f"{FOLDER}/wasm_assets/{p.relative_to(art.root).as_posix()}", p.read_bytes()) for p in files]
    return sorted(entries)


def build_zip(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".zip.tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, data in _entries():
            info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3
            zf.writestr(info, data)
    tmp.replace(path)
    return path


def post_build(config) -> None:
    out = Path(config["site_dir"]) / "downloads"
    art = artefacts.Artefacts()
    notebook, build = art.notebook, art.build_notebook
    if not build.is_file():
        raise PluginError(f"downloads: {build} is missing; run `python -m export.lesson.build_notebook`")
    build_zip(out / ZIP_NAME)
    (out / notebook.name).write_bytes(notebook.read_bytes())
    (out / build.name).write_bytes(build.read_bytes())
    log.info("downloads: %s, %s and %s written", ZIP_NAME, notebook.name, build.name)
