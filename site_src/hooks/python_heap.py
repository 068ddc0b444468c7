"""MkDocs hook: the exercise's Python heap, made at build time.

Starting Python in Pyodide takes ~3 s of a learner's first visit; restoring a
heap taken just after start-up takes ~0.2 s. After ``site_assets.py`` has
copied Pyodide into ``site/vendor/pyodide/`` (list this hook after it, and
before ``editor_bundle.py``, whose progress sizes count the heap), it

* runs ``python_heap.mjs`` in Node: Pyodide starts, imports the exercise's
  ``sandbox`` and ``diagnosis`` (the recipe the browser uses,
  ``site_src/js/microgpt/exercise/heap_recipe.js``) and hands over its heap
  without the zero pages (~15 MB);
* writes it to ``site/vendor/pyodide-heap/heap.bin``, which
  ``asset_versions.py`` versions like any package folder and the service
  worker caches on first use.

The heap is reproducible (same files, same bytes) and cached in the system
temp folder, keyed by everything that goes into it, so rebuilds while serving
take no time. Without Node the build stops with a message saying so.
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

log = logging.getLogger("mkdocs.hooks.python_heap")

ROOT = Path(__file__).resolve().parents[2]
MAKER = Path(__file__).with_name("python_heap.mjs")
RECIPE = [ROOT / "site_src" / "js" / "microgpt" / "exercise" / name for name in ("heap_recipe.js", "heap_pages.js")]
SANDBOX = ROOT / "site_src" / "pyodide" / "sandbox.py"
DIAGNOSIS = ROOT / "site_src" / "pyodide" / "diagnosis.py"
PYODIDE_REL = Path("vendor") / "pyodide"  # where site_assets.py copies Pyodide (before versioning)
HEAP_REL = Path("vendor") / "pyodide-heap" / "heap.bin"


def _node_version() -> str:
    try:
        proc = subprocess.run(["node", "--version"], capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        raise Abort(
            "node is not installed: the build makes the exercise's Python heap with it "
            "(install Node.js 20 and run `npm ci`)."
        ) from None
    if proc.returncode:
        raise Abort(f"node does not run ({proc.stderr.strip()}): install Node.js 20.")
    return proc.stdout.strip()


def heap_key(pyodide: Path) -> str:
    """Digest of everything the heap is made from."""
    digest = hashlib.sha256(_node_version().encode())
    for path in [MAKER, *RECIPE, SANDBOX, DIAGNOSIS, *sorted(p for p in pyodide.iterdir() if p.is_file())]:
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:20]


def make_heap(pyodide: Path) -> Path:
    """Path of the heap for these files (made now, or taken from the cache)."""
    cached = Path(tempfile.gettempdir()) / f"mha-python-heap-{heap_key(pyodide)}.bin"
    if cached.is_file():
        return cached
    log.info("python_heap: starting Pyodide in Node to make the exercise's heap (a few seconds)")
    with tempfile.TemporaryDirectory(prefix="mha-heap-") as tmp:
        out = Path(tmp) / "heap.bin"
        proc = subprocess.run(
            ["node", "--no-warnings", str(MAKER), str(pyodide), str(SANDBOX), str(DIAGNOSIS), str(out)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if proc.returncode or not out.is_file():
            last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
            raise Abort(
                f"Node could not make the exercise's Python heap ({last}); "
                f"run `node {MAKER.relative_to(ROOT)} ...` by hand to see why."
            )
        summary = json.loads(proc.stdout.strip().splitlines()[-1])
        staged = cached.with_suffix(".tmp")
        shutil.copyfile(out, staged)
        staged.replace(cached)
    log.info(
        "python_heap: %.1f MB heap of Pyodide %s made in %.1f s",
        summary["bytes"] / 1e6,
        summary["pyodide"],
        summary["ms"] / 1000,
    )
    return cached


def post_build(config) -> None:
    site = Path(config["site_dir"])
    pyodide = site / PYODIDE_REL
    if not (pyodide / "pyodide.mjs").is_file():
        raise Abort(
            f"{PYODIDE_REL}/pyodide.mjs is missing from the built site: keep python_heap after site_assets in build_steps.STEPS."
        )
    target = site / HEAP_REL
    target.parent.mkdir(parents=True, exist_ok=True)
    staged = target.with_name(f".{target.name}.partial")
    shutil.copyfile(make_heap(pyodide), staged)
    staged.replace(target)
