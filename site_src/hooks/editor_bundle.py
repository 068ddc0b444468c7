"""MkDocs hook for the microgpt page: the exercise's code editor and microgpt's source.

After the pages are built (and after ``site_assets.py`` has copied
``site_src/``: after it in ``build_steps.STEPS``) it

* bundles ``site_src/js/microgpt/exercise/editor_entry.js`` together with CodeMirror 6
  from ``node_modules`` into one minified classic script (which Chrome keeps
  compiled in its code cache, unlike a module script),
  ``site/vendor/codemirror/editor.js``, with the ``esbuild`` npm package (the
  bundle is cached in the system temp folder, keyed by the entry, the lock
  file and the esbuild version, so rebuilds while serving are instant);
* removes the copied entry file from ``site/js/microgpt/exercise/`` (it imports npm
  package names, which a browser cannot resolve);
* copies ``export/microgpt/microgpt.py`` (the one-page model) to
  ``site/wasm_assets/microgpt.py``, which the page shows, with its multi-head
  lines highlighted, in "Unlocked";
* copies ``export/microgpt/floats.py`` to ``site/wasm_assets/microgpt_floats.py``:
  after a Check's numbers are in, the exercise's diagnosis explains mistakes
  with microgpt's own float arithmetic;
* writes ``site/pyodide/sizes.json``: the bytes of every file the exercise
  waits for while Python starts (Pyodide's core files, the Python heap
  made by ``python_heap.py`` and the trained model),
  so its progress line can say "x of y MB (z %)" on a slow connection.

The page computes microgpt's answers itself (microgpt/verdict.js); no file
holds them.

Nothing is downloaded; without ``node_modules`` the build stops with a message
to run ``npm ci``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import subprocess
import tempfile
from pathlib import Path

from mkdocs.exceptions import Abort

log = logging.getLogger("mkdocs.hooks.editor_bundle")

ROOT = Path(__file__).resolve().parents[2]
ENTRY = ROOT / "site_src" / "js" / "microgpt" / "exercise" / "editor_entry.js"
NODE_MODULES = ROOT / "node_modules"
ESBUILD = NODE_MODULES / ".bin" / "esbuild"
MICROGPT = ROOT / "export" / "microgpt" / "microgpt.py"
FLOATS = ROOT / "export" / "microgpt" / "floats.py"
# What the exercise's worker downloads before Python is ready (site paths), for its progress line.
WAITED_FOR = (
    "vendor/pyodide/pyodide.mjs",
    "vendor/pyodide/pyodide.asm.mjs",
    "vendor/pyodide/pyodide.asm.wasm",
    "vendor/pyodide/python_stdlib.zip",
    "vendor/pyodide/pyodide-lock.json",
    "vendor/pyodide-heap/heap.bin",
    "wasm_assets/microgpt-trained.json",
)
SIZES_REL = Path("pyodide") / "sizes.json"
BUNDLE_REL = Path("vendor") / "codemirror" / "editor.js"
BANNER = "/* CodeMirror 6 (MIT, Marijn Haverbeke and others) and @codemirror/lang-python, bundled with esbuild. */"


def _esbuild_version() -> str:
    proc = subprocess.run([str(ESBUILD), "--version"], capture_output=True, text=True, timeout=60)
    if proc.returncode:
        raise Abort(f"esbuild does not run ({proc.stderr.strip()}): run `npm ci` in {ROOT}.")
    return proc.stdout.strip()


# How esbuild is run (besides the entry and the output): part of the cache key.
ESBUILD_ARGS = (
    "--bundle",
    "--format=iife",
    "--minify",
    "--target=es2020",
    "--legal-comments=eof",
    f"--banner:js={BANNER}",
    "--log-level=warning",
)


def _cache_key() -> str:
    digest = hashlib.sha256()
    digest.update(ENTRY.read_bytes())
    digest.update("\0".join(ESBUILD_ARGS).encode())
    lock = ROOT / "package-lock.json"
    if lock.is_file():
        digest.update(lock.read_bytes())
    digest.update(_esbuild_version().encode())
    return digest.hexdigest()[:20]


def build_bundle() -> Path:
    """Path of the bundled editor script (built now, or taken from the cache)."""
    for needed in (
        ESBUILD,
        NODE_MODULES / "codemirror" / "package.json",
        NODE_MODULES / "@codemirror" / "lang-python" / "package.json",
    ):
        if not needed.exists():
            raise Abort(f"{needed.relative_to(ROOT)} is missing: run `npm ci` in {ROOT} and build again.")
    cached = Path(tempfile.gettempdir()) / f"mha-editor-{_cache_key()}.js"
    if cached.is_file():
        return cached
    with tempfile.TemporaryDirectory(prefix="mha-editor-") as tmp:
        out = Path(tmp) / "editor.js"
        proc = subprocess.run(
            [str(ESBUILD), str(ENTRY), *ESBUILD_ARGS, f"--outfile={out}"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if proc.returncode or not out.is_file():
            raise Abort(f"esbuild could not bundle the editor:\n{proc.stderr.strip()}")
        staged = cached.with_suffix(".tmp")
        shutil.copyfile(out, staged)
        staged.replace(cached)
    log.info("editor_bundle: bundled CodeMirror (%d kB)", cached.stat().st_size // 1024)
    return cached


def on_pre_build(config) -> None:
    build_bundle()  # fail before any page is rendered


def post_build(config) -> None:
    site = Path(config["site_dir"])
    target = site / BUNDLE_REL
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(build_bundle(), target)
    copied_entry = site / "js" / "microgpt" / "exercise" / ENTRY.name
    if copied_entry.exists():
        copied_entry.unlink()
    for needed in (MICROGPT, FLOATS):
        if not needed.is_file():
            raise Abort(f"{needed.relative_to(ROOT)} is missing: the microgpt page needs it.")
    (site / "wasm_assets").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(MICROGPT, site / "wasm_assets" / "microgpt.py")
    shutil.copyfile(FLOATS, site / "wasm_assets" / "microgpt_floats.py")
    _write_sizes(site)


def _write_sizes(site: Path) -> None:
    """site/pyodide/sizes.json: {file name: bytes} of what the exercise waits for."""
    sizes = {}
    for rel in WAITED_FOR:
        path = site / rel
        if not path.is_file():
            raise Abort(f"{rel} is missing from the built site: the exercise cannot start Python without it.")
        sizes[path.name] = path.stat().st_size
    target = site / SIZES_REL
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(sizes, indent=1) + "\n", encoding="utf-8")
