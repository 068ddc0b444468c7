"""The build exercise's notebook (downloads): fresh, valid nbformat, its starter fails every Check, a solution passes.

The notebook is written from the exercise's one file and the pipeline's
artefacts (export/lesson/build_notebook.py); it ships starters only. Its code
cells run here in order, in one namespace, as a kernel would run them.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import nbformat
import pytest

from export.artefacts import Artefacts
from export.lesson import build_notebook
from tests.pyodide.test_build_exercise import MISTAKES, solution

ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS = [name for name, _ in build_notebook.exercise_module().FUNCTIONS]


@pytest.fixture(scope="module")
def saved() -> dict:
    path = Artefacts().build_notebook
    if not path.is_file():
        pytest.fail(f"{path} is missing: run `python -m export.lesson.build_notebook`")
    return json.loads(path.read_text())


def run_cells(nb: dict, code: str | None = None) -> list[str]:
    """Every code cell in order (the starter's cell replaced by `code`); what each printed."""
    starter = build_notebook.exercise_module().STARTER.strip("\n")
    namespace: dict = {"__name__": "__main__"}
    printed = []
    for cell in build_notebook.code_cells(nb):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code if code is not None and cell == starter else cell, "cell", "exec"), namespace)
        printed.append(out.getvalue())
    return printed


def checks_said(printed: list[str]) -> dict[str, str]:
    lines = [p.strip() for p in printed if p.startswith(("✓", "✗"))]
    assert len(lines) == len(FUNCTIONS), printed
    return dict(zip(FUNCTIONS, lines))


def test_the_saved_notebook_is_the_one_its_inputs_give_now(saved):
    assert saved == build_notebook.build_notebook(), (
        "wasm_assets/build-it-yourself.ipynb differs from what its inputs give now; "
        "run `python -m export.lesson.build_notebook` and commit it"
    )


def test_it_is_valid_nbformat_with_the_exercise_files_starter(saved):
    nbformat.validate(nbformat.from_dict(saved))
    starter = build_notebook.exercise_module().STARTER.strip("\n")
    assert starter in build_notebook.code_cells(saved)


def test_the_starter_runs_and_fails_every_check(saved):
    said = checks_said(run_cells(saved))
    for name, line in said.items():
        assert line.startswith(f"✗ {name}: not yet"), line


def test_a_correct_solution_passes_every_check(saved):
    said = checks_said(run_cells(saved, solution()))
    for name, line in said.items():
        assert line.startswith(f"✓ {name} gives the model's numbers on all 16 rows"), line


def test_a_mistake_fails_its_check_and_names_the_first_number_that_differs(saved):
    _, make, _, _ = MISTAKES["scores_unscaled"]
    said = checks_said(run_cells(saved, make()))
    assert said["split_heads"].startswith("✓")
    assert said["scores"].startswith("✗ scores: not yet. At head 0, receiver 0, source 0 yours is "), said["scores"]


def test_the_site_offers_it_in_its_downloads_and_names_it_beside_the_exercise(built_site):
    assert (built_site / "downloads/build-it-yourself.ipynb").read_bytes() == Artefacts().build_notebook.read_bytes()
    page = (built_site / "lesson/build/index.html").read_text()
    assert 'href="../../downloads/build-it-yourself.ipynb"' in page
