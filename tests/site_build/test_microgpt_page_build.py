"""The built microgpt page without a browser: editor bundle, source copy, widgets."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

from tests.site_paths import built_file, versions

ROOT = Path(__file__).resolve().parents[2]


def test_editor_bundle_is_self_contained(built_site: Path, tmp_path: Path):
    bundle = built_file(built_site, "vendor/codemirror/editor.js").read_text()
    assert "createEditor" in bundle and "CodeMirror 6" in bundle[:200]
    # One classic script with nothing left to resolve: a copy outside the repository
    # (no node_modules next to it) runs in a bare Node context, imports nothing
    # (a classic script cannot) and leaves just mhaCodeMirror.createEditor behind.
    copy = tmp_path / "editor.js"
    copy.write_text(bundle)
    run = (
        "const vm = require('vm'); const fs = require('fs'); const context = {};"
        f"vm.runInNewContext(fs.readFileSync({json.dumps(str(copy))}, 'utf8'), context);"
        "console.log(JSON.stringify([Object.keys(context), Object.keys(context.mhaCodeMirror),"
        " typeof context.mhaCodeMirror.createEditor]))"
    )
    proc = subprocess.run(["node", "-e", run], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [["mhaCodeMirror"], ["createEditor"], "function"]
    assert not re.search(r"^\s*(import|export)\s", bundle, re.M)
    assert not (built_site / "js/microgpt/exercise/editor_entry.js").exists()


def test_exercise_files_and_source_copy(built_site: Path):
    assert (built_site / "js/microgpt/exercise/worker.js").is_file()
    for name in ("sandbox.py", "diagnosis.py", "starter.py", "solution.py"):
        assert (built_site / "pyodide" / name).is_file(), name
    copied = (built_site / "wasm_assets/microgpt.py").read_text()
    assert copied == (ROOT / "export/microgpt/microgpt.py").read_text()
    assert "# --- multi-head attention begins ---" in copied and "# --- multi-head attention ends ---" in copied
    floats = (built_site / "wasm_assets/microgpt_floats.py").read_text()
    assert floats == (ROOT / "export/microgpt/floats.py").read_text()


def test_no_served_file_holds_the_answers(built_site: Path):
    """microgpt's answers to the exercise (any case's expected numbers) are in no file of the site."""
    from export.microgpt import exercise_cases, load_trained

    doc = exercise_cases(load_trained(ROOT / "wasm_assets/microgpt-trained.json"))
    # Each expected number as JSON writes it, and to 9 decimals (a rounded copy would do too).
    needles = set()
    for case in doc["cases"]:
        for value in case["expected"][:4] + case["after_wo"][:4]:
            needles.add(json.dumps(value).encode())
            needles.add(f"{value:.9f}".encode())
    needles = {n for n in needles if len(n) >= 8}  # long enough not to occur by chance
    found = {}
    for path in built_site.rglob("*"):
        if path.is_file() and path.suffix not in (".wasm", ".zip", ".onnx", ".png", ".woff2"):
            data = path.read_bytes()
            hits = [n for n in needles if n in data]
            if hits:
                found[str(path.relative_to(built_site))] = hits[:3]
    assert not found, found
    assert not (built_site / "wasm_assets/microgpt-cases.json").exists()


def test_sizes_name_what_the_exercise_waits_for(built_site: Path):
    sizes = json.loads((built_site / "pyodide/sizes.json").read_text())
    assert sizes["pyodide.asm.wasm"] == built_file(built_site, "vendor/pyodide/pyodide.asm.wasm").stat().st_size
    assert set(sizes) >= {"python_stdlib.zip", "pyodide.asm.mjs", "microgpt-trained.json"}


def test_page_has_every_section_and_widget(built_site: Path):
    html = (built_site / "microgpt/index.html").read_text()
    for anchor in ("watch", "explore", "build", "check-yourself", "unlocked", "progress"):
        assert f'id="{anchor}"' in html, anchor
    for widget in ("watch", "explore", "exercise", "source", "progress"):
        assert f'data-mha-widget="microgpt-{widget}"' in html, widget
    assert html.count('data-mha-widget="quiz"') == 4  # Check yourself: the lesson's quiz engine
    main = (built_site / "js/main.js").read_text()
    for widget in ("watch", "explore", "exercise", "source", "progress"):
        assert f'"microgpt-{widget}": "./microgpt/{widget}.js"' in main


def test_the_shipped_heap_is_the_recipes_byte_for_byte(built_site: Path, tmp_path: Path):
    """The heap the build ships is what python_heap.mjs makes from the site's Pyodide, again and again."""
    import hashlib

    from site_src.hooks.service_worker import RUNTIME_PATTERN

    heap = built_file(built_site, "vendor/pyodide-heap/heap.bin")
    data = heap.read_bytes()
    assert int.from_bytes(data[:4], "little") == 0x6D686131  # heap_pages.js MAGIC: zero pages dropped
    assert versions(built_site)["digests"]["vendor/pyodide-heap/heap.bin"] == hashlib.sha256(data).hexdigest()
    assert json.loads((built_site / "pyodide/sizes.json").read_text())["heap.bin"] == len(data)
    # Cached on first use, never precached: a reader who never opens the exercise downloads none of it.
    assert re.search(RUNTIME_PATTERN, "vendor/pyodide-heap/heap.bin")
    assert '"url":"vendor/pyodide-heap' not in (built_site / "sw.js").read_text()  # (the precache's entries)
    # Made again from a copy of the maker in another folder (a checkout elsewhere, a CI clone): the build
    # may have taken its heap from the temp-folder cache that another checkout filled.
    elsewhere = tmp_path / "a" / "checkout" / "somewhere" / "else"
    for rel in (
        "site_src/hooks/python_heap.mjs",
        "site_src/js/microgpt/exercise/heap_recipe.js",
        "site_src/js/microgpt/exercise/heap_pages.js",
    ):
        (elsewhere / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, elsewhere / rel)
    again = tmp_path / "heap.bin"
    pyodide = built_file(built_site, "vendor/pyodide/pyodide.mjs").parent
    proc = subprocess.run(
        [
            "node",
            "--no-warnings",
            str(elsewhere / "site_src/hooks/python_heap.mjs"),
            str(pyodide),
            str(ROOT / "site_src/pyodide/sandbox.py"),
            str(ROOT / "site_src/pyodide/diagnosis.py"),
            str(again),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    # Digests, not bytes: pytest's diff of two 15 MB byte strings takes longer than the test's timeout.
    assert hashlib.sha256(again.read_bytes()).hexdigest() == hashlib.sha256(data).hexdigest()


def test_only_the_exercise_pages_boot_python_from_their_heads(built_site: Path):
    # microgpt's exercise, and the build page's exercise of functions with its one file named on the tag
    tags = {
        "microgpt/index.html": '<script src="../js/microgpt/prestart.bundle.js"></script>',
        "lesson/build/index.html": '<script src="../../js/microgpt/prestart.bundle.js" '
        'data-exercise="pyodide/exercises/build_attention.py"></script>',
    }
    for path, tag in tags.items():
        head = (built_site / path).read_text().split("</head>", 1)[0]
        up = "../" * path.count("/")
        assert tag in head and f'src="{up}js/main.js"' not in head, path  # before the page's other scripts
    for other in built_site.rglob("index.html"):
        if other.relative_to(built_site).as_posix() not in tags:
            assert "prestart" not in other.read_text(), other
    bundle = (built_site / "js/microgpt/prestart.bundle.js").read_text()
    assert "import.meta" not in bundle and not re.search(r"^\s*import[\s{]", bundle, re.M)  # a classic script
    # precached, for offline visits
    assert '"url":"js/microgpt/prestart.bundle.js"' in (built_site / "sw.js").read_text()
