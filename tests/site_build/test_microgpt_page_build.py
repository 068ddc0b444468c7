"""The built microgpt page without a browser: editor bundle, source copy, widgets."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.site_paths import built_file

ROOT = Path(__file__).resolve().parents[2]


def test_editor_bundle_is_self_contained(built_site: Path, tmp_path: Path):
    bundle = built_file(built_site, "vendor/codemirror/editor.js").read_text()
    assert "createEditor" in bundle and "CodeMirror 6" in bundle[:200]
    # One module with nothing left to resolve: a copy outside the repository (no
    # node_modules next to it) imports under Node and exports just createEditor.
    copy = tmp_path / "editor.mjs"
    copy.write_text(bundle)
    proc = subprocess.run(["node", "--input-type=module", "-e",
                           f"const m = await import({json.dumps(copy.as_uri())}); console.log(JSON.stringify(Object.keys(m)))"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == ["createEditor"]
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
    needles = {n for n in needles if len(n) >= 8}   # long enough not to occur by chance
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
    assert html.count('data-mha-widget="quiz"') == 4     # Check yourself: the lesson's quiz engine
    main = (built_site / "js/main.js").read_text()
    for widget in ("watch", "explore", "exercise", "source", "progress"):
        assert f'"microgpt-{widget}": "./microgpt/{widget}.js"' in main
