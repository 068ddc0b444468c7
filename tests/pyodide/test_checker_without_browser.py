"""The multi_head exercise without a browser: starter, solution, and the checker's messages.

The checker (site_src/pyodide/sandbox.py and diagnosis.py) is written to run in
Pyodide; it is plain Python, so its messages can be checked quickly under
CPython here. It only reports numbers and explanations: the verdict is the
page's (site_src/js/microgpt/verdict.js), mirrored by ``judge`` below.
tests/browser/microgpt/test_exercise_page.py submits every row of MISTAKES in real Pyodide.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from tests.pyodide.sandbox_home import sandbox_home

ROOT = Path(__file__).resolve().parents[2]
EXERCISE = ROOT / "site_src" / "pyodide"
MODEL = ROOT / "wasm_assets" / "microgpt-trained.json"

K_LINE = "k_h = [k[start:start + HEAD_DIM] for k in keys]"
V_LINE = "v_h = [v[start:start + HEAD_DIM] for v in values]"
Q_LINE = "q_h = q[start:start + HEAD_DIM]"
E_LINE = "out.extend(blended)"
S_EXPR = "/ math.sqrt(HEAD_DIM)"
W_LINE = "w = softmax(scores)"
BLEND = "zip(w, v_h)"


def solution() -> str:
    return (EXERCISE / "solution.py").read_text()


def starter() -> str:
    return (EXERCISE / "starter.py").read_text()


def _edit(*pairs):
    def make():
        source = solution()
        for old, new in pairs:
            assert source.count(old) == 1, old
            source = source.replace(old, new)
        return source

    return make


# Mistake -> (how to make it from the solution, what the message must say, the line it must name).
# The message is the hint's three tiers joined by SEP (idea, where, code); the pattern reads the
# first two. The line is given by a piece of text that line holds in the edited source (None: no
# line asked); it is named in the "where" tier.
BLEND_LINE = "blended = [sum(weight * v[j] for weight, v in zip(w, v_h)) for j in range(HEAD_DIM)]"
MISTAKES = {
    "correct": (_edit(), r"^$", None),
    "append": (
        _edit((E_LINE, "out.append(blended)")),
        r"out holds lists instead of numbers.*uses append.*extend adds",
        "out.append",
    ),
    "values_unsliced": (_edit((V_LINE, "v_h = values")), r"The values are not sliced", "v_h = values"),
    "keys_unsliced": (
        _edit((K_LINE, "k_h = keys")),
        r"only its own 4 numbers of every key.*The keys are not sliced",
        "k_h = keys",
    ),
    "key_offset": (
        _edit((K_LINE, "k_h = [k[h:h + HEAD_DIM] for k in keys]")),
        r"keys are sliced at the wrong offset.*head 2 \(h = 1\) used key numbers 1-4",
        "k[h:h",
    ),
    "value_offset": (
        _edit((V_LINE, "v_h = [v[h:h + HEAD_DIM] for v in values]")),
        r"values are sliced at the wrong offset.*head 2 \(h = 1\) used value numbers 1-4",
        "v[h:h",
    ),
    "key_offset_forgotten": (
        _edit((K_LINE, "k_h = [k[:HEAD_DIM] for k in keys]")),
        r"every head takes the first 4, which belong to head 1.*starts at number 0",
        "k[:HEAD_DIM]",
    ),
    "value_offset_forgotten": (
        _edit((V_LINE, "v_h = [v[:HEAD_DIM] for v in values]")),
        r"own 4 numbers of every value.*every head takes the first 4.*starts at number 0",
        "v[:HEAD_DIM]",
    ),
    "keys_list_sliced": (
        _edit((K_LINE, "k_h = keys[start:start + HEAD_DIM]")),
        r"cuts the list of keys instead.*the slice is applied to the list of keys",
        "keys[start:",
    ),
    "values_list_sliced": (
        _edit((V_LINE, "v_h = values[start:start + HEAD_DIM]")),
        r"cuts the list of values instead.*applied to the list of values",
        "values[start:",
    ),
    "weights_not_blend": (
        _edit((E_LINE, "out.extend(w)")),
        r"attention weights, one per position, instead of the head's 4 blended numbers.*"
        r"w is added to out",
        "out.extend(w)",
    ),
    "blend_all_16": (
        _edit((V_LINE, "v_h = values"), (BLEND_LINE, BLEND_LINE.replace("HEAD_DIM)]", "N_EMBD)]"))),
        r"blends all 16 numbers of every value instead of its own 4",
        "v_h = values",
    ),
    "raises": (
        _edit((E_LINE, "out.extend(blended[HEAD_DIM])")),
        r"stopped with an error.*Line \d+ stops with IndexError",
        "blended[HEAD_DIM]",
    ),
    "scale_n_embd": (_edit((S_EXPR, "/ N_EMBD")), r"size of a whole vector, 16.*divided by N_EMBD", "/ N_EMBD"),
    "scale_head_dim": (_edit((S_EXPR, "/ HEAD_DIM")), r"divided by the head's size, 4, but.*square root", "/ HEAD_DIM"),
    "scale_missing": (_edit((S_EXPR, "")), r"scaled down before the softmax.*dot products alone", "scores = "),
    "scale_sqrt_n_embd": (
        _edit((S_EXPR, "/ math.sqrt(N_EMBD)")),
        r"square root of the size of a whole vector",
        "sqrt(N_EMBD)",
    ),
    "no_softmax": (_edit((W_LINE, "w = scores")), r"used as weights directly", "w = scores"),
    "softmax_of_query": (_edit((W_LINE, "w = softmax(q_h)")), r"come from the query slice", "softmax(q_h)"),
    "query_unsliced": (_edit((Q_LINE, "q_h = q")), r"Every head uses the first 4 numbers of the query", "q_h = q"),
    "heads_reversed": (
        _edit(("for h in range(N_HEAD):", "for h in reversed(range(N_HEAD)):")),
        r"heads come out in reverse order",
        "reversed(range",
    ),
    "attn_wo_inside": (
        _edit(("    return out\n", '    return matvec(W["layer0.attn_wo"], out)\n')),
        r"after attn_wo.*applied inside multi_head",
        "return matvec",
    ),
    "slice_end_both": (
        _edit(
            (K_LINE, "k_h = [k[start:HEAD_DIM] for k in keys]"), (V_LINE, "v_h = [v[start:HEAD_DIM] for v in values]")
        ),
        r"from head 2 on each (key|value)'s slice holds 0 numbers.*in head 2 \(h = 1\) every "
        r"(key|value) in [kv]_h has 0 numbers.*IndexError",
        None,
    ),
    "slice_end_keys": (
        _edit((K_LINE, "k_h = [k[start:HEAD_DIM] for k in keys]")),
        r"in head 2 \(h = 1\) every key in k_h has 0 numbers.*4 numbers after start",
        "k[start:HEAD_DIM]",
    ),
    "blend_unsliced_values": (
        _edit((BLEND, "zip(w, values)")),
        r"reads the whole values instead.*v_h holds this head's 4 numbers.*reads `values`",
        "zip(w, values)",
    ),
    "return_tuple": (_edit(("    return out\n", "    return out, w\n")), r"gives back 2 things.*tuple", None),
    "return_in_loop": (_edit(("    return out\n", "        return out\n")), r"one head's numbers only", None),
    "no_multi_head": (lambda: "print('hello')\n", r"does not define one", None),
    "returns_none": (lambda: "def multi_head(q, keys, values):\n    return None\n", r"gives back nothing", None),
    "starter": (starter, r"Nothing is added to out yet.*Blank 2.*Blank 1 is still open", None),
    "syntax_error": (_edit((E_LINE, "out.extend(blended")), r"cannot read your code.*Line \d+", None),
    "error_after": (
        lambda: solution() + "\nprint(no_such_name)\n",
        r"the lines after it stop with an error.*NameError",
        None,
    ),
}
SEP = "\x1e"


def tiers(message: str) -> list[str]:
    """The hint's idea, where and code (the checker joins them with SEP)."""
    parts = message.split(SEP)
    assert len(parts) == 3, parts
    return parts


# What counts as code in a hint's first tier: brackets, assignments, calls, backticks, a for clause,
# math., .extend/.append, or a line of the solution.
CODE_IN_WORDS = re.compile(r"[\[\]=`]|\w\(|\.\w+\(|\bfor \w+ in\b|\bmath\.|\.(extend|append)\b")
SOLUTION_LINES = (K_LINE, V_LINE, BLEND_LINE, E_LINE)


def line_of(source: str, needle: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if needle in line)


def judge(doc, result) -> bool:
    """What the page decides (site_src/js/microgpt/verdict.js): every case equal to microgpt's, nothing to say."""
    cases, outputs = doc["cases"], result["outputs"]
    if result["message"] or result["stop"] or len(outputs) != len(cases):
        return False
    return all(
        len(out) == len(c["expected"])
        and all(abs(g - w) <= doc["tolerance"] * max(1.0, abs(w)) for g, w in zip(out, c["expected"]))
        for c, out in zip(cases, outputs)
    )


def inputs_of(doc) -> str:
    """What the page hands the worker: the inputs, not the answers."""
    return json.dumps(
        {
            "n_head": doc["n_head"],
            "head_dim": doc["head_dim"],
            "attn_wo": doc["attn_wo"],
            "cases": [{k: c[k] for k in ("name", "pos", "q", "keys", "values")} for c in doc["cases"]],
        }
    )


@pytest.fixture(scope="module")
def cases_doc():
    from export.microgpt import exercise_cases, load_trained

    if not MODEL.is_file():
        pytest.skip("wasm_assets/microgpt-trained.json is missing (make microgpt)")
    return exercise_cases(load_trained(MODEL))


@pytest.fixture(scope="module")
def checker(tmp_path_factory):
    with sandbox_home(tmp_path_factory) as mp:
        import diagnosis
        import sandbox

        # The reference by its file's path, as the browser's worker hands it over (never importable by name).
        mp.setattr(diagnosis, "REFERENCE", str(ROOT / "export" / "microgpt" / "floats.py"))
        sandbox.start()
        yield types.SimpleNamespace(
            check=diagnosis.check, run=sandbox.run, start=sandbox.start, healthy=lambda: sandbox.healthy()
        )


@pytest.mark.parametrize("name", list(MISTAKES))
def test_checker_names_each_mistake(checker, cases_doc, name):
    make, pattern, needle = MISTAKES[name]
    source = make()
    result = json.loads(checker.check(source, inputs_of(cases_doc)))
    assert judge(cases_doc, result) is (name == "correct"), result
    assert result["stop"] == ""
    if name == "correct":
        assert result["message"] == ""
        return
    idea, where, code = tiers(result["message"])
    assert re.search(pattern, idea + "\n" + where, re.S), result["message"]
    if needle:
        assert re.search(rf"\b[Ll]ine {line_of(source, needle)}\b", where), where
    # The first tier is the idea in words: no code in it; no tier before the code holds a solution line.
    assert idea.strip() and not CODE_IN_WORDS.search(idea), idea
    for line in SOLUTION_LINES:
        assert line not in idea and line not in where, (line, where)
    assert code.strip(), "every diagnosis has code to show on request"


def test_every_mistake_has_its_own_message(checker, cases_doc):
    messages = {}
    for name, (make, _, _) in MISTAKES.items():
        if name != "correct":
            message = json.loads(checker.check(make(), inputs_of(cases_doc)))["message"]
            messages.setdefault(re.sub(r"\d+", "N", message), []).append(name)
    shared = {m: names for m, names in messages.items() if len(names) > 1}
    assert not shared, shared


def test_the_cases_are_microgpts(cases_doc):
    """The shipped answers are forward_attention's, case for case."""
    from export.microgpt import forward_attention, load_trained

    model = load_trained(MODEL)
    assert [c["name"] for c in cases_doc["cases"]].count("kristopher") == len("kristopher") + 1
    for c in cases_doc["cases"]:
        run = forward_attention(model["weights"], model["uchars"], c["name"])
        assert c["expected"] == run["heads_out"][c["pos"]] and c["after_wo"] == run["attn_out"][c["pos"]]
        assert c["keys"] == run["keys"][: c["pos"] + 1]


def test_run_reports_learner_line_numbers(checker, capfd):
    checker.start()  # with pytest's capture as the streams to go back to
    assert json.loads(checker.run("print('hi')")) == {"ok": True, "error": "", "stop": ""}
    assert "hi" in capfd.readouterr().out
    result = json.loads(checker.run("x = 1\n\ny = [][x]\n"))
    assert not result["ok"]
    assert 'File "exercise.py", line 3, in <module>' in result["error"]
    assert "IndexError" in result["error"]
    assert "sandbox" not in result["error"] and "diagnosis" not in result["error"]


@pytest.mark.parametrize(
    "source, stop, text",
    [
        ("import sys\nsys.exit()\n", "exit", "called exit() at line 2"),
        ("raise KeyboardInterrupt\n", "interrupt", "KeyboardInterrupt"),
        ("class Odd(BaseException): pass\nraise Odd('x')\n", "", "line 2, in <module>"),
        ("raise MemoryError\n", "memory", "used up Python's memory at line 1"),
    ],
)
def test_run_says_why_code_stopped(checker, source, stop, text):
    result = json.loads(checker.run(source))
    assert result["stop"] == stop and text in result["error"], result
    assert "checker" not in result["error"]


TAMPERING = {
    "grader": "import diagnosis\ndiagnosis.explain = lambda *a, **k: ''\ndiagnosis.check = None\n",
    "sum": "import builtins\nbuiltins.sum = lambda *a: 0\n",
    "exp": "import math\nmath.exp = lambda x: 1.0\n",
    "json_load": "import json\njson.load = lambda f: {}\njson.loads = None\n",
    "function_code": "import json\njson.dumps.__code__ = (lambda *a, **k: '{}').__code__\n",
    "class_attribute": "import json\njson.JSONDecoder.decode = lambda self, s: 1\n",
    "floats": "import microgpt_floats as f\nf.softmax = lambda s: s\n",
    "streams": "import sys\nsys.stdout = None\nsys.stderr = None\n",
    "sys_path": "import sys\nsys.path.clear()\nsys.meta_path.clear()\n",
    "recursion": "import sys\nsys.setrecursionlimit(60)\n",
    "cwd": "import os\nos.chdir('/')\n",
}


@pytest.mark.parametrize("name", list(TAMPERING))
def test_tampering_is_undone_before_the_next_job(checker, cases_doc, name, monkeypatch):
    import export.microgpt.floats as floats

    monkeypatch.setitem(sys.modules, "microgpt_floats", floats)  # the module's name in the browser
    checker.start()  # a snapshot that includes it
    inputs = inputs_of(cases_doc)
    checker.run(TAMPERING[name])
    wrong = MISTAKES["scale_head_dim"][0]()
    result = json.loads(checker.check(TAMPERING[name] + wrong, inputs))
    assert not judge(cases_doc, result)
    assert checker.healthy() == ""
    result = json.loads(checker.check(solution(), inputs))
    assert judge(cases_doc, result) and result["message"] == "", result
    result = json.loads(checker.check(wrong, inputs))
    assert "divided by HEAD_DIM" in result["message"]


# What the browser's heap does (heap_recipe.js PRE_SNAPSHOT): prepare() before the snapshot, then
# start() after the restore, with modules imported and edited in between by Pyodide and the worker.
PREPARED_THEN_STARTED = """
import json, sys, types
import sandbox
sandbox.prepare()
json.marker = "set after prepare"
json.JSONEncoder.marker = "set after prepare"
late = types.ModuleType("late")
exec("class K:\\n    x = 1\\ndef f():\\n    return 1\\n", late.__dict__)
sys.modules["late"] = late
sandbox.start()
json.marker = json.JSONEncoder.marker = "the learner's"
json.dumps = None
late.K.x = 2
late.f.__code__ = (lambda: 2).__code__
late.extra = 3
del sys.modules["late"]
sandbox.restore()
assert json.marker == "set after prepare" and json.JSONEncoder.marker == "set after prepare"
assert json.dumps([1]) == "[1]"
assert sys.modules["late"] is late and late.K.x == 1 and late.f() == 1 and not hasattr(late, "extra")
assert sandbox.healthy() == ""
print("restored")
"""


def test_a_guard_prepared_before_the_snapshot_takes_what_changed_since():
    proc = subprocess.run(
        [sys.executable, "-c", PREPARED_THEN_STARTED], cwd=EXERCISE, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and "restored" in proc.stdout, proc.stderr


def test_healthy_notices_a_changed_library(checker, tmp_path, monkeypatch):
    library = tmp_path / "lib"
    library.mkdir()
    (library / "a.py").write_text("x = 1\n")
    monkeypatch.syspath_prepend(str(library))
    checker.start()
    assert checker.healthy() == ""
    (library / "a.py").unlink()
    assert "standard library" in checker.healthy()


def test_starter_and_solution_run_as_plain_python(tmp_path):
    """Both files run under CPython next to the model file; the solution prints 16 numbers."""
    (tmp_path / "microgpt-trained.json").write_bytes(MODEL.read_bytes())
    for name, expect in (("solution.py", "out has 16 items"), ("starter.py", "out has 0 items")):
        proc = subprocess.run(
            [sys.executable, str(EXERCISE / name)], cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 0, proc.stderr
        assert expect in proc.stdout


def test_solution_matches_forward_attention(tmp_path):
    """The numbers the solution prints after attn_wo are forward_attention's for "emma"."""
    from export.microgpt import forward_attention, load_trained

    model = load_trained(MODEL)
    want = forward_attention(model["weights"], model["uchars"], "emma")["attn_out"][-1]
    (tmp_path / "microgpt-trained.json").write_bytes(MODEL.read_bytes())
    proc = subprocess.run(
        [sys.executable, str(EXERCISE / "solution.py")], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    printed = proc.stdout.split("after attn_wo:", 1)[1]
    got = [float(v) for v in re.findall(r"-?\d+\.\d+", printed)]
    # printed with three decimals: each is within half a unit of the third decimal of microgpt's value
    assert len(got) == len(want)
    assert got == pytest.approx(want, abs=5e-4 + 1e-12)


def test_only_the_blanks_differ():
    """The solution is the starter with the two blanks filled in (plus its first comment line)."""
    import difflib

    diff = [
        l
        for l in difflib.unified_diff(starter().splitlines(), solution().splitlines(), lineterm="", n=0)
        if l[:1] in "+-" and not l.startswith(("+++", "---"))
    ]
    added = [l[1:].strip() for l in diff if l.startswith("+")]
    code = [l for l in added if not l.startswith("#")]
    assert code == list(SOLUTION_LINES), diff


def test_no_solution_line_before_the_learner_asks():
    """Starter, page prose and every message before "Show me the code" hold no line of the two blanks."""
    texts = {"starter.py": starter(), "docs/microgpt.md": (ROOT / "docs" / "microgpt.md").read_text()}
    for name, text in texts.items():
        flat = re.sub(r"\s+", " ", text)
        for line in SOLUTION_LINES + ("out.extend(blended)", "for k in keys]", "for v in values]", "zip(w, v_h)"):
            assert line not in flat, (name, line)
    # The starter shows the slice of one vector; it teaches attention, not list methods: no comment or
    # message sets extend against append (the hint names the method only when a check finds it used).
    assert "k[start:start + HEAD_DIM]" in starter()
    assert not [l for l in starter().splitlines() if "extend" in l and ("#" in l or "print" in l)]


def test_the_code_tier_shows_the_solution_lines():
    """The code the hints show on request is solution.py's own."""
    import diagnosis

    for line in (
        diagnosis.K_CODE,
        diagnosis.V_CODE,
        diagnosis.BLEND_CODE,
        diagnosis.EXTEND_CODE,
        diagnosis.SCORES_CODE,
        diagnosis.SOFTMAX_CODE,
        diagnosis.Q_CODE,
    ):
        assert line in solution(), line
