"""The site build only renders: its hooks compute nothing, and it needs neither torch nor ../shared.

* no hook (``site_src/hooks/``, the code the build runs) imports torch, onnx, onnxruntime, tokenizers or numpy,
  and of ``export/`` only ``export.artefacts`` (the artefact paths; standard library only);
* a virtual environment with only the ``site`` extra (``.venv-site/``, made by
  ``make build``/``make serve``/``make test``) builds, from a copy of the project
  with no ``../shared`` beside it, the same files byte for byte as this one.
"""

from __future__ import annotations

import ast
import filecmp
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE_PYTHON = ROOT / ".venv-site" / "bin" / "python"
COMPUTING = {"torch", "onnx", "onnxruntime", "onnxscript", "tokenizers", "numpy", "matplotlib"}
ALLOWED_EXPORT = {"export.artefacts"}
# Hooks another open issue is rewriting; each entry must still be needed (the test says when it is not).
PENDING: dict = {}  # empty: editor_bundle.py no longer computes the exercise's answers


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_site_sources_import_nothing_that_computes():
    found, unused = {}, dict(PENDING)
    for path in sorted((ROOT / "site_src").rglob("*.py")):  # the hooks and the browser's Python (pyodide/)
        rel = path.relative_to(ROOT).as_posix()
        bad = {
            n
            for n in _imports(path)
            if n.split(".")[0] in COMPUTING or (n.split(".")[0] == "export" and n not in ALLOWED_EXPORT)
        }
        if bad and bad <= PENDING.get(rel, set()):
            unused.pop(rel, None)
            continue
        if bad:
            found[rel] = sorted(bad)
    assert not found, f"site hooks that import computing code (write page data in export/ instead): {found}"
    assert not unused, f"these exemptions are no longer needed, remove them from PENDING: {sorted(unused)}"


def test_artefacts_module_needs_only_the_standard_library():
    blocker = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.split('.')[0] in {sorted(COMPUTING)!r}: raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import export.artefacts as a\n"
        "print(a.Artefacts().evidence.name)\n"
    )
    proc = subprocess.run([sys.executable, "-c", blocker], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "evidence.json"


def _build(python: Path, project: Path, out: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("TINYSTORIES_PATH", "PYTHONPATH")}
    env["NO_MKDOCS_2_WARNING"] = "1"
    proc = subprocess.run(
        [str(python), "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, (
        f"mkdocs build --strict failed in {project}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )


def _differences(a: Path, b: Path) -> list[str]:
    out = []
    cmp = filecmp.dircmp(a, b)
    out += [f"only in the full build: {n}" for n in cmp.left_only] + [
        f"only in the site-only build: {n}" for n in cmp.right_only
    ]
    for name in cmp.common_files:
        if (a / name).read_bytes() != (b / name).read_bytes():
            out.append(f"differs: {(a / name).relative_to(a.parents[0])}")
    for name in cmp.common_dirs:
        out += _differences(a / name, b / name)
    return out


@pytest.mark.slow
def test_site_only_environment_without_shared_builds_the_same_site(built_site, tmp_path):
    if not SITE_PYTHON.is_file():
        pytest.fail(f"{SITE_PYTHON} is missing: `make .venv-site/ready` makes the site-only environment")
    probe = subprocess.run(
        [
            str(SITE_PYTHON),
            "-c",
            "import importlib.util as u; "
            "print([m for m in ('torch', 'onnx', 'onnxruntime', 'tokenizers', 'numpy') if u.find_spec(m)])",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.stdout.strip() == "[]", f"the site-only environment has pipeline packages: {probe.stdout}"
    # A copy of the project in a folder with no ../shared beside it.
    project = tmp_path / "alone" / "project"
    project.mkdir(parents=True)
    assert not (project.parent / "shared").exists()
    for name in ("docs", "site_src", "export", "wasm_assets"):
        shutil.copytree(ROOT / name, project / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("mkdocs.yml", "pyproject.toml", "package.json", "package-lock.json"):
        shutil.copy2(ROOT / name, project / name)
    (project / "node_modules").symlink_to(ROOT / "node_modules")
    out = tmp_path / "site-only"
    _build(SITE_PYTHON, project, out)
    assert not _differences(built_site, out), _differences(built_site, out)
