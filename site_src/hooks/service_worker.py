"""MkDocs hook: the service worker that keeps the site working offline.

After every other step has written its files (last in ``build_steps.STEPS``), it

* bundles ``site_src/hooks/service_worker.js`` with the workbox modules from
  ``node_modules`` (esbuild), naming the runtime cache after a digest of the
  files that go in it (models, onnxruntime, Pyodide), so a build that changes
  any of them starts a fresh cache and the worker deletes the old one;
* lets Workbox's ``workbox-build`` (``injectManifest``) list every precached
  file with its revision and write ``site/sw.js``.

Precached: the pages, styles, scripts and small data files (``PRECACHE_IGNORE``
says what is left out). Cached on first use only: ``RUNTIME_PATTERN``.
``site_src/js/runtime/offline.js`` (started by main.js) registers the worker and says when a new build is ready.
Nothing is downloaded at build time.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import subprocess
import tempfile
from pathlib import Path

from mkdocs.exceptions import Abort

log = logging.getLogger("mkdocs.hooks.service_worker")

ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(__file__).with_name("service_worker.js")
NODE_MODULES = ROOT / "node_modules"
ESBUILD = NODE_MODULES / ".bin" / "esbuild"
SW_NAME = "sw.js"
BUILD_FILE = "build.json"  # asset_versions.py: never cached, so a page can ask which build is live

# Site paths (relative to the site root) that are cached only when a page uses them.
RUNTIME_PATTERN = r"^(?:vendor/ort/|vendor/pyodide/|vendor/pyodide-heap/|wasm_assets/models/[^/]+\.onnx$)"
# Shipped in wasm_assets/ but fetched by no page: what the build already rendered into the pages
# (the page data, the head measurements, the sweep, the toy task, page 1's sentence search, the
# figures drawn from them) and what is there to be read or downloaded (the notebook, the test
# vectors, the parity logits, the checkpoints). tests/site_build/test_precache_only_fetched.py
# fails when a precached file is named by no script or page.
NOT_FETCHED = [
    "wasm_assets/checkpoints/**",
    "wasm_assets/parity.json",
    "wasm_assets/tokenizer_vectors.json",
    "wasm_assets/example_search.json",
    "wasm_assets/page_data.json",
    "wasm_assets/heads.json",
    "wasm_assets/head_sweep.json",
    "wasm_assets/toy_task.json",
    "wasm_assets/head_atlas.svg",
    "wasm_assets/validation_traces.svg",
    "wasm_assets/mha-lesson.ipynb",
    "wasm_assets/notebook-requirements.txt",
    "wasm_assets/build-it-yourself.ipynb",
]
# Not precached: the runtime files above, what no page fetches, downloads, source
# maps and the search's other-language stemmers.
PRECACHE_IGNORE = [
    SW_NAME,
    BUILD_FILE,
    "vendor/ort/**",
    "vendor/pyodide/**",
    "vendor/pyodide-heap/**",
    "wasm_assets/models/*.onnx",
    *NOT_FETCHED,
    "downloads/**",
    "**/*.map",
    "assets/javascripts/lunr/**",
]
PRECACHE_MAX_BYTES = 1_500_000

_INJECT = r"""
const { injectManifest } = require("workbox-build");
let input = "";
process.stdin.on("data", (d) => { input += d; });
process.stdin.on("end", async () => {
  try {
    const result = await injectManifest(JSON.parse(input));
    console.log(JSON.stringify({ count: result.count, size: result.size, warnings: result.warnings }));
  } catch (err) {
    console.error(err && err.message ? err.message : String(err));
    process.exit(1);
  }
});
"""


def runtime_files(site: Path) -> list[str]:
    """Site paths of the files cached on first use."""
    pattern = re.compile(RUNTIME_PATTERN)
    paths = (p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file())
    return sorted(rel for rel in paths if pattern.search(rel))


def runtime_urls(site: Path, files: list[str]) -> list[str]:
    """The same files as the pages ask for them: with this build's ?v= (asset_versions.py)."""
    versions = json.loads((site / BUILD_FILE).read_text()) if (site / BUILD_FILE).is_file() else {"files": {}}
    return [f"{rel}?v={versions['files'][rel]}" if rel in versions["files"] else rel for rel in files]


def runtime_digests(site: Path, files: list[str]) -> dict[str, str]:
    """Each runtime file's URL (as runtime_urls() writes it) -> its digest in build.json: the whole
    SHA-256 of a package file, the version (its first hex digits) of a wasm_assets file. The worker
    checks every copy against it before storing it and before answering with it."""
    versions = json.loads((site / BUILD_FILE).read_text()) if (site / BUILD_FILE).is_file() else {}
    digests, short = versions.get("digests", {}), versions.get("files", {})
    plain = {target: prefix for prefix, target in versions.get("folders", {}).items()}  # vendor/x/<v>/ -> vendor/x/
    out = {}
    for rel, url in zip(files, runtime_urls(site, files)):
        folder = next((t for t in plain if rel.startswith(t)), None)
        name = plain[folder] + rel[len(folder) :] if folder else rel
        digest = digests.get(name) or short.get(name)
        if digest:
            out[url] = digest
    return out


def runtime_digest(site: Path, files: list[str]) -> str:
    """Digest of the runtime-cached files of this build (paths and contents)."""
    digest = hashlib.sha256()
    for rel in files:
        digest.update(rel.encode() + b"\0" + hashlib.sha256((site / rel).read_bytes()).digest())
    return digest.hexdigest()[:16]


def _bundle(out: Path, runtime_cache: str, files: list[str], digests: dict[str, str]) -> None:
    for needed in (
        ESBUILD,
        NODE_MODULES / "workbox-build" / "package.json",
        NODE_MODULES / "workbox-precaching" / "package.json",
    ):
        if not needed.exists():
            raise Abort(f"{needed.relative_to(ROOT)} is missing: run `npm ci` in {ROOT} and build again.")
    defines = {
        "RUNTIME_CACHE": runtime_cache,
        "OTHER_CACHE": "mha-other",
        "RUNTIME_PATTERN": RUNTIME_PATTERN,
        "BUILD_FILE": BUILD_FILE,
    }
    args = [
        str(ESBUILD),
        str(SOURCE),
        "--bundle",
        "--format=iife",
        "--minify",
        "--target=es2020",
        "--legal-comments=none",
        f"--outfile={out}",
        "--log-level=warning",
        '--define:process.env.NODE_ENV="production"',
    ]
    args += [f"--define:{key}={json.dumps(value)}" for key, value in defines.items()]
    args.append(f"--define:RUNTIME_FILES={json.dumps(files, separators=(',', ':'))}")
    args.append(f"--define:RUNTIME_DIGESTS={json.dumps(digests, separators=(',', ':'))}")
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300)
    if proc.returncode or not out.is_file():
        raise Abort(f"esbuild could not bundle the service worker:\n{proc.stderr.strip()}")


def build_service_worker(site: Path) -> dict:
    """Write site/sw.js; returns workbox-build's summary (count, size, warnings)."""
    files = runtime_files(site)
    runtime_cache = f"mha-runtime-{runtime_digest(site, files)}"
    with tempfile.TemporaryDirectory(prefix="mha-sw-") as tmp:
        bundled = Path(tmp) / "sw.src.js"
        _bundle(bundled, runtime_cache, runtime_urls(site, files), runtime_digests(site, files))
        staged = Path(tmp) / SW_NAME
        config = {
            "swSrc": str(bundled),
            "swDest": str(staged),
            "globDirectory": str(site),
            "globPatterns": ["**/*"],
            "globIgnores": PRECACHE_IGNORE,
            "maximumFileSizeToCacheInBytes": PRECACHE_MAX_BYTES,
        }
        proc = subprocess.run(
            ["node", "-e", _INJECT], input=json.dumps(config), cwd=ROOT, capture_output=True, text=True, timeout=300
        )
        if proc.returncode or not staged.is_file():
            raise Abort(f"workbox-build could not write the service worker: {proc.stderr.strip()}")
        summary = json.loads(proc.stdout.strip().splitlines()[-1])
        partial = site / f".{SW_NAME}.partial"
        partial.write_bytes(staged.read_bytes())
        partial.replace(site / SW_NAME)
    summary["runtime_cache"] = runtime_cache
    return summary


def post_build(config) -> None:
    summary = build_service_worker(Path(config["site_dir"]))
    for warning in summary.get("warnings") or []:
        log.warning("service_worker: %s", warning)
    log.info(
        "service_worker: %s precaches %d files (%d kB); runtime cache %s",
        SW_NAME,
        summary["count"],
        summary["size"] // 1024,
        summary["runtime_cache"],
    )
