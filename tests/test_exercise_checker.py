"""The multi_head exercise without a browser: starter, solution, checker messages.

The checker (site_src/js/microgpt/exercise/checker.py) is written to run in Pyodide; it
is plain Python, so its verdicts can be checked quickly under CPython here.
tests/test_exercise_browser.py runs the same cases in real Pyodide.
"""
from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXERCISE = ROOT / "site_src" / "js" / "microgpt" / "exercise"
MODEL = ROOT / "wasm_assets" / "microgpt-trained.json"

# The learner's mistakes the checker must name, as edits of the solution.
K_LINE = "k_h = [k[start:start + HEAD_DIM] for k in keys]"
V_LINE = "v_h = [v[start:start + HEAD_DIM] for v in values]"
E_LINE = "out.extend(blended)"


def solution() -> str:
    return (EXERCISE / "solution.py").read_text()


def starter() -> str:
    return (EXERCISE / "starter.py").read_text()


def variants() -> dict[str, str]:
    sol = solution()
    for needle in (K_LINE, V_LINE, E_LINE):
        assert sol.count(needle) == 1, needle
    return {
        "correct": sol,
        "append": sol.replace(E_LINE, "out.append(blended)"),
        "keys_only": sol.replace(V_LINE, "v_h = values"),
        "values_only": sol.replace(K_LINE, "k_h = keys"),
        "key_offset": sol.replace(K_LINE, "k_h = [k[h:h + HEAD_DIM] for k in keys]"),
        "raises": sol.replace(E_LINE, "out.extend(blended[HEAD_DIM])"),
        "loop": sol.replace(E_LINE, "while True:\n            pass"),
    }


# What each verdict must say (regular expressions, searched in the message).
EXPECTED = {
    "correct": r"^Passed!.*after attn_wo the 16 numbers match",
    "append": r"out holds lists instead of numbers.*out\.extend\(blended\)",
    "keys_only": r"The values are not sliced",
    "values_only": r"The keys are not sliced",
    "key_offset": r"keys are sliced at the wrong offset: head 2 \(h = 1\) used key numbers 1-4",
    "raises": r'File "exercise\.py", line (\d+), in multi_head.*IndexError',
}


def line_of(source: str, needle: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if needle in line)


@pytest.fixture(scope="module")
def checker(tmp_path_factory, monkeypatch_module):
    if not MODEL.is_file():
        pytest.skip("wasm_assets/microgpt-trained.json is missing (make microgpt)")
    home = tmp_path_factory.mktemp("pyodide_home")
    (home / "microgpt-trained.json").write_bytes(MODEL.read_bytes())
    monkeypatch_module.chdir(home)
    spec = importlib.util.spec_from_file_location("mha_checker_under_test", EXERCISE / "checker.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


@pytest.mark.parametrize("name", [n for n in EXPECTED])
def test_checker_names_each_mistake(checker, name):
    source = variants()[name]
    verdict = json.loads(checker.check(source))
    assert verdict["passed"] is (name == "correct"), verdict
    match = re.search(EXPECTED[name], verdict["message"], re.S)
    assert match, verdict["message"]
    if name == "raises":   # the traceback points at the learner's own line
        assert int(match.group(1)) == line_of(source, "blended[HEAD_DIM]")


def test_checker_other_mistakes(checker):
    sol = solution()
    cases = {
        sol.replace("    return out\n", "        return out\n", 1): "one head's worth",
        sol.replace(V_LINE, "v_h = values").replace("for j in range(HEAD_DIM):", "for j in range(len(v_h[0])):"):
            "out has 64 numbers.*values are not sliced",
        sol.replace(V_LINE, "v_h = [v[start + 1:start + 1 + HEAD_DIM] for v in values]"): "IndexError",
        sol.replace(V_LINE, "v_h = [v[h:h + HEAD_DIM] for v in values]"):
            "values are sliced at the wrong offset: head 2 \\(h = 1\\) used value numbers 1-4",
        sol.replace("/ math.sqrt(HEAD_DIM)", ""): "not microgpt's, and they do not come from slicing",
        sol.replace(E_LINE, "out.extend(blended"): "syntax error.*line \\d+",
        sol + "\nprint(no_such_name)\n": "multi_head is right, but the lines after it stop.*NameError",
        "print('hello')\n": "no function called multi_head",
        "def multi_head(q, keys, values):\n    return None\n": "returned None",
        starter(): "out is empty",
    }
    for source, pattern in cases.items():
        verdict = json.loads(checker.check(source))
        assert not verdict["passed"]
        assert re.search(pattern, verdict["message"], re.S), (pattern, verdict["message"])


def test_run_reports_learner_line_numbers(checker, capfd):
    assert json.loads(checker.run("print('hi')")) == {"ok": True, "interrupted": False}
    assert "hi" in capfd.readouterr().out
    result = json.loads(checker.run("x = 1\n\ny = [][x]\n"))
    assert not result["ok"]
    assert 'File "exercise.py", line 3, in <module>' in result["error"]
    assert "IndexError" in result["error"]
    assert "mha_checker" not in result["error"] and "checker.py" not in result["error"]


def test_starter_and_solution_run_as_plain_python(tmp_path):
    """Both files run under CPython next to the model file; the solution prints 16 numbers."""
    (tmp_path / "microgpt-trained.json").write_bytes(MODEL.read_bytes())
    for name, expect in (("solution.py", "out has 16 items"), ("starter.py", "out has 0 items")):
        proc = subprocess.run([sys.executable, str(EXERCISE / name)], cwd=tmp_path, capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert expect in proc.stdout


def test_solution_matches_forward_attention(tmp_path):
    """The numbers the solution prints after attn_wo are forward_attention's for "emma"."""
    from export.microgpt import forward_attention, load_trained

    model = load_trained(MODEL)
    want = forward_attention(model["weights"], model["uchars"], "emma")["attn_out"][-1]
    (tmp_path / "microgpt-trained.json").write_bytes(MODEL.read_bytes())
    proc = subprocess.run([sys.executable, str(EXERCISE / "solution.py")], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    printed = proc.stdout.split("after attn_wo:", 1)[1]
    got = [float(v) for v in re.findall(r"-?\d+\.\d+", printed)]
    # printed with three decimals: each is within half a unit of the third decimal of microgpt's value
    assert len(got) == len(want)
    assert got == pytest.approx(want, abs=5e-4 + 1e-12)


def test_only_the_blanks_differ():
    """The solution is the starter with the two blanks filled in (plus its first comment line)."""
    import difflib

    diff = [l for l in difflib.unified_diff(starter().splitlines(), solution().splitlines(), lineterm="", n=0)
            if l[:1] in "+-" and not l.startswith(("+++", "---"))]
    added = [l[1:].strip() for l in diff if l.startswith("+")]
    assert any(K_LINE in l for l in added) and any(V_LINE in l for l in added) and any(E_LINE in l for l in added)
    assert len(added) == 4, diff
