"""MkDocs hook: the lesson's downloads, built with the site.

After the pages are written it puts into ``site/downloads/``:

* ``mha-export.zip``: every ``export/*.py`` file, under ``mha-export/export/``,
  plus a short README. Deterministic: sorted names, a fixed timestamp and
  fixed permissions, so the same sources always give the same bytes.
* ``mha-lesson.ipynb``: the worked calculations of the lesson pages as a
  notebook, written by ``export/notebook.py``.
"""
from __future__ import annotations

import logging
import sys
import zipfile
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.downloads")

ROOT = Path(__file__).resolve().parents[2]
EXPORT = ROOT / "export"
ZIP_NAME = "mha-export.zip"
NOTEBOOK_NAME = "mha-lesson.ipynb"
FIXED_TIME = (2024, 1, 1, 0, 0, 0)
README = """The lesson's Python pipeline (folder export/).

Unpack next to the lesson's wasm_assets/ folder (or the downloaded notebook)
and run, with Python 3.11 and torch installed:

    python -m export --help

The notebook mha-lesson.ipynb repeats the lesson's worked calculations with
these modules and the shipped four-head checkpoint.
"""


def build_zip(path: Path) -> Path:
    files = sorted(p for p in EXPORT.rglob("*.py") if p.is_file() and "__pycache__" not in p.parts)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".zip.tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        entries = [("mha-export/README.txt", README.encode())]
        entries += [(f"mha-export/export/{p.relative_to(EXPORT).as_posix()}", p.read_bytes()) for p in files]
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3
            zf.writestr(info, data)
    tmp.replace(path)
    return path


def on_post_build(config) -> None:
    out = Path(config["site_dir"]) / "downloads"
    build_zip(out / ZIP_NAME)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from export.lesson.notebook import build_notebook, write_notebook

    write_notebook(build_notebook(), out / NOTEBOOK_NAME)
    log.info("downloads: %s and %s written", ZIP_NAME, NOTEBOOK_NAME)
