"""The built microgpt page without a browser: editor bundle, source copy, widgets."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_editor_bundle_is_self_contained(built_site: Path, tmp_path: Path):
    bundle = (built_site / "vendor/codemirror/editor.js").read_text()
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


def test_shipped_cases_are_computed_by_export_microgpt(built_site: Path):
    """The answers the page judges with are exercise_cases() of the committed model, exactly."""
    from export.microgpt import exercise_cases, load_trained

    shipped = json.loads((built_site / "wasm_assets/microgpt-cases.json").read_text())
    assert shipped == exercise_cases(load_trained(ROOT / "wasm_assets/microgpt-trained.json"))
    assert shipped["format"] == "microgpt-exercise-cases/1" and len(shipped["cases"]) == 27


def test_page_has_every_section_and_widget(built_site: Path):
    html = (built_site / "microgpt/index.html").read_text()
    for anchor in ("watch", "explore", "build", "check-yourself", "unlocked", "progress"):
        assert f'id="{anchor}"' in html, anchor
    for widget in ("watch", "explore", "exercise", "quiz", "source", "progress"):
        assert f'data-mha-widget="microgpt-{widget}"' in html, widget
    main = (built_site / "js/main.js").read_text()
    for widget in ("watch", "explore", "exercise", "quiz", "source", "progress"):
        assert f'"microgpt-{widget}": "./microgpt/{widget}.js"' in main
