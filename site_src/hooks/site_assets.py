"""MkDocs hook: put the browser runtime next to the pages.

After the pages are built it copies

* every folder of ``site_src/`` except ``hooks/`` and ``overrides/`` to the
  same name in the site (``site_src/js`` -> ``site/js``, ``site_src/css`` ->
  ``site/css``, and folders other pages add later);
* ``wasm_assets/`` (models, vocabulary, evidence, plots, ...) to
  ``site/wasm_assets/``;
* from ``node_modules``: onnxruntime-web's two entry points with exactly the
  WebAssembly pair each one loads, and Pyodide's core files, to
  ``site/vendor/ort/`` and ``site/vendor/pyodide/``.

Nothing is fetched from the network; a missing ``node_modules`` stops the build
with a message to run ``npm ci``.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

from mkdocs.exceptions import Abort

import export.artefacts as artefacts  # the artefact folder ($MHA_WASM_ASSETS may point at another one)

log = logging.getLogger("mkdocs.hooks.site_assets")

ROOT = Path(__file__).resolve().parents[2]
SITE_SRC = ROOT / "site_src"
NODE_MODULES = ROOT / "node_modules"
SKIP_FOLDERS = {"hooks", "overrides", "__pycache__"}

ORT_VERSION = "1.30.0"
# In onnxruntime-web 1.30 ort.wasm.min.mjs loads ort-wasm-simd-threaded.{mjs,wasm}
# and ort.webgpu.min.mjs loads ort-wasm-simd-threaded.asyncify.{mjs,wasm}
# (the WebGPU build uses the native WebGPU execution provider, not JSEP).
ORT_FILES = (
    "ort.wasm.min.mjs",
    "ort-wasm-simd-threaded.mjs",
    "ort-wasm-simd-threaded.wasm",
    "ort.webgpu.min.mjs",
    "ort-wasm-simd-threaded.asyncify.mjs",
    "ort-wasm-simd-threaded.asyncify.wasm",
)
PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")


def _copy_file(src: Path, dst: Path) -> None:
    """Copy unless an identical-looking file (same size and mtime) is already there."""
    if dst.is_file():
        a, b = src.stat(), dst.stat()
        if a.st_size == b.st_size and int(a.st_mtime) == int(b.st_mtime):
            return
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dst)


def _copy_tree(src: Path, dst: Path) -> int:
    n = 0
    for path in sorted(src.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and not path.name.startswith("."):
            _copy_file(path, dst / path.relative_to(src))
            n += 1
    return n


def _package_dir(name: str) -> Path:
    pkg = NODE_MODULES / name
    if not (pkg / "package.json").is_file():
        raise Abort(f"node_modules/{name} is missing: run `npm ci` in {ROOT} (or `make setup`) and build again.")
    return pkg


def _check_runtime() -> tuple[Path, Path]:
    ort = _package_dir("onnxruntime-web")
    version = json.loads((ort / "package.json").read_text()).get("version")
    if version != ORT_VERSION:
        raise Abort(f"node_modules has onnxruntime-web {version}, the site needs {ORT_VERSION}: run `npm ci`.")
    pyodide = _package_dir("pyodide")
    missing = [f"onnxruntime-web/dist/{f}" for f in ORT_FILES if not (ort / "dist" / f).is_file()]
    missing += [f"pyodide/{f}" for f in PYODIDE_FILES if not (pyodide / f).is_file()]
    if missing:
        raise Abort(f"node_modules is incomplete ({', '.join(missing)}): run `npm ci` and build again.")
    return ort / "dist", pyodide


def on_pre_build(config) -> None:
    _check_runtime()  # fail early, before any page is rendered


def on_serve(server, config, builder):
    for folder in (SITE_SRC, artefacts.assets_dir()):
        if folder.is_dir():
            server.watch(str(folder))
    return server


def post_build(config) -> None:
    site = Path(config["site_dir"])
    ort_dist, pyodide = _check_runtime()
    copied = 0
    for folder in sorted(SITE_SRC.iterdir()):
        if folder.is_dir() and folder.name not in SKIP_FOLDERS:
            copied += _copy_tree(folder, site / folder.name)
    wasm_assets = artefacts.assets_dir()
    if wasm_assets.is_dir():
        copied += _copy_tree(wasm_assets, site / "wasm_assets")
    else:
        log.info("wasm_assets/ does not exist yet: the pages will say the models are missing (run `make models`).")
    for name in ORT_FILES:
        _copy_file(ort_dist / name, site / "vendor" / "ort" / name)
    for name in PYODIDE_FILES:
        _copy_file(pyodide / name, site / "vendor" / "pyodide" / name)
    log.info("site_assets: %d site files, %d runtime files copied", copied, len(ORT_FILES) + len(PYODIDE_FILES))
