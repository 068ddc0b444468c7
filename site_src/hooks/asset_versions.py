"""MkDocs hook: address every runtime file of this build by its content.

After every hook that writes into ``site/wasm_assets/`` or ``site/vendor/``
(just before ``service_worker`` in ``build_steps.STEPS``), it

* moves each package folder ``vendor/<name>/`` (onnxruntime, Pyodide,
  CodeMirror, whatever is there) into ``vendor/<name>/<digest>/``, the digest
  being that of the folder's files: a runtime loads its own files by fixed
  names relative to one folder, so the folder carries the version;
* gives every file under ``wasm_assets/`` the digest of its content, which the
  pages append as ``?v=<digest>``;
* notes every such file's size (for progress bars) and every package file's
  whole SHA-256 (for a script that reads a file whole and checks it, as the
  exercise does with its Python heap);
* writes the maps to ``site/build.json`` (with a build id: the digest of the
  maps) and to ``site/js/runtime/asset_map.js``, which
  ``site_src/js/runtime/assets.js`` imports, so ``siteUrl()`` turns a plain
  site path into this build's versioned URL.

Nothing is listed by name: a file or a package added later is versioned the same
way. An old page therefore asks only for its own build's files; when a deploy
has replaced them, it compares its build id with ``build.json`` and says that a
new version is live instead of calling the files damaged.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.asset_versions")

BUILD_FILE = "build.json"
MAP_MODULE = "js/runtime/asset_map.js"
FILE_ROOTS = ("wasm_assets",)  # files versioned by ?v=
FOLDER_ROOT = "vendor"  # each vendor/<name>/ versioned by a sub-folder
DIGEST_CHARS = 12
_DIGEST_DIR = re.compile(rf"^[0-9a-f]{{{DIGEST_CHARS}}}$")


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def version_package(package: Path) -> str:
    """Move package/* into package/<digest>/; returns the digest folder's name.

    Files already inside a digest folder (an earlier build into the same site
    folder, as ``mkdocs serve`` does) are dropped unless they are the current ones.
    """
    loose = [p for p in _files(package) if not _DIGEST_DIR.match(p.relative_to(package).parts[0])]
    if not loose:  # nothing new: the package is already versioned
        existing = [d.name for d in package.iterdir() if d.is_dir() and _DIGEST_DIR.match(d.name)]
        if len(existing) == 1:
            return existing[0]
        raise RuntimeError(f"{package} holds no files to version")
    digest = hashlib.sha256()
    for path in loose:
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + bytes.fromhex(_file_digest(path)))
    name = digest.hexdigest()[:DIGEST_CHARS]
    target = package / name
    for old in package.iterdir():
        if old.is_dir() and _DIGEST_DIR.match(old.name):
            shutil.rmtree(old)
    for path in loose:
        dest = target / path.relative_to(package)
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, dest)
    for folder in sorted((p for p in package.iterdir() if p.is_dir() and p != target), reverse=True):
        shutil.rmtree(folder)  # now-empty sub-folders of the loose layout
    return name


def version_site(site: Path) -> dict:
    """Version the site's runtime files in place; returns the map written to build.json."""
    folders, sizes, digests = {}, {}, {}
    vendor = site / FOLDER_ROOT
    if vendor.is_dir():
        for package in sorted(p for p in vendor.iterdir() if p.is_dir()):
            prefix = f"{FOLDER_ROOT}/{package.name}/"
            folders[prefix] = f"{prefix}{version_package(package)}/"
            for path in _files(site / folders[prefix]):
                rel = prefix + path.relative_to(site / folders[prefix]).as_posix()
                sizes[rel] = path.stat().st_size
                digests[rel] = _file_digest(path)
    files = {}
    for root in FILE_ROOTS:
        for path in _files(site / root) if (site / root).is_dir() else []:
            files[path.relative_to(site).as_posix()] = _file_digest(path)[:DIGEST_CHARS]
            sizes[path.relative_to(site).as_posix()] = path.stat().st_size
    body = json.dumps({"files": files, "folders": folders}, sort_keys=True, separators=(",", ":"))
    # sizes: what a download of each file amounts to once decoded (a progress
    # bar cannot learn it from a gzip response's Content-Length).
    return {
        "build": hashlib.sha256(body.encode()).hexdigest()[:DIGEST_CHARS],
        "files": files,
        "folders": folders,
        "sizes": sizes,
        "digests": digests,
    }


def read_versions(site: Path) -> dict:
    """The map of a built site (tests and the service-worker hook read it)."""
    return json.loads((site / BUILD_FILE).read_text())


def versioned_path(versions: dict, path: str) -> str:
    """The site path (with ?v=) under which this build serves `path`; the same rule as siteUrl()."""
    if path in versions["files"]:
        return f"{path}?v={versions['files'][path]}"
    for prefix, target in versions["folders"].items():
        if path.startswith(prefix):
            return target + path[len(prefix) :]
    return path


def physical_path(versions: dict, path: str) -> str:
    """Where `path` lies in the built site (no query)."""
    return versioned_path(versions, path).split("?", 1)[0]


def _write(path: Path, text: str) -> None:
    partial = path.with_name(f".{path.name}.partial")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial.write_text(text)
    partial.replace(path)


def post_build(config) -> None:
    site = Path(config["site_dir"])
    versions = version_site(site)
    _write(site / BUILD_FILE, json.dumps(versions, indent=1, sort_keys=True) + "\n")
    _write(
        site / MAP_MODULE,
        (
            "// This build's content versions (site_src/hooks/asset_versions.py wrote it; do not edit).\n"
            f"export const BUILD_ID = {json.dumps(versions['build'])};\n"
            f"export const FILE_VERSIONS = {json.dumps(versions['files'], sort_keys=True)};\n"
            f"export const FOLDER_VERSIONS = {json.dumps(versions['folders'], sort_keys=True)};\n"
            f"export const FILE_SIZES = {json.dumps(versions['sizes'], sort_keys=True)};\n"
            f"export const FILE_DIGESTS = {json.dumps(versions['digests'], sort_keys=True)};\n"
        ),
    )
    log.info(
        "asset_versions: build %s, %d files and %d packages versioned",
        versions["build"],
        len(versions["files"]),
        len(versions["folders"]),
    )
