"""microgpt's Level 2 without a browser: the whole multi_head, checked through the shared exercise runtime.

Level 2 is an exercise file (site_src/pyodide/exercises/microgpt_multi_head.py)
on the runtime the build exercise uses: ``calls.collect`` runs the learner's code
and calls their multi_head on every case the page sends; the page judges the
numbers (verdict.js, mirrored by ``judge`` below); only then does ``calls.explain``
load the file, which says what is wrong in Level 1's words (diagnosis.py) or its
own. Every mistake Level 1's tests make must get Level 1's first message here
too, and the mistakes only a whole function can make get their own.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from tests.pyodide.test_checker_without_browser import CODE_IN_WORDS, MISTAKES as LEVEL1, line_of

ROOT = Path(__file__).resolve().parents[2]
PYODIDE = ROOT / "site_src" / "pyodide"
EXERCISE = PYODIDE / "exercises" / "microgpt_multi_head.py"
MODEL = ROOT / "wasm_assets" / "microgpt-trained.json"
SEP = "\x1e"


def _file_constant(name: str) -> str:
    tree = ast.parse(EXERCISE.read_text())
    return next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == name
    )


def starter() -> str:
    return _file_constant("STARTER")


def solution() -> str:
    """The starter with its placeholder replaced by the worked body, as the page's "Show solution" makes it."""
    text = starter()
    placeholder = "    ...   # your code here\n"
    assert text.count(placeholder) == 1
    return text.replace(placeholder, _file_constant("BODY"))


def edit(*pairs):
    def make():
        source = solution()
        for old, new in pairs:
            assert source.count(old) == 1, old
            source = source.replace(old, new)
        return source

    return make


@pytest.fixture(scope="module")
def cases_doc():
    from export.microgpt import exercise_cases, load_trained

    if not MODEL.is_file():
        pytest.skip("wasm_assets/microgpt-trained.json is missing (make microgpt)")
    return exercise_cases(load_trained(MODEL))


@pytest.fixture(scope="module")
def checker(tmp_path_factory):
    home = tmp_path_factory.mktemp("pyodide_home")
    (home / "microgpt-trained.json").write_bytes(MODEL.read_bytes())
    mp = pytest.MonkeyPatch()
    mp.chdir(home)
    mp.syspath_prepend(str(PYODIDE))  # calls and diagnosis import sandbox by name, as in the browser
    import calls
    import diagnosis
    import sandbox

    # microgpt's arithmetic by its file's path, as the worker writes it after the numbers are in.
    mp.setattr(diagnosis, "REFERENCE", str(ROOT / "export" / "microgpt" / "floats.py"))
    sandbox.start()
    yield calls
    mp.undo()


def inputs_of(doc) -> str:
    """What the page (level2.js) hands the worker: the inputs, as calls of the learner's function."""
    return json.dumps(
        {
            "function": "multi_head",
            "n_head": doc["n_head"],
            "attn_wo": doc["attn_wo"],
            "calls": [[c["q"], c["keys"], c["values"]] for c in doc["cases"]],
            "cases": [{"name": c["name"], "pos": c["pos"]} for c in doc["cases"]],
        }
    )


def judge(doc, collected) -> bool:
    """The page's verdict (verdict.js judge): every case microgpt's within the tolerance, nothing to object to."""
    outputs = collected["outputs"]
    if collected["failed"] or collected["stop"] or len(outputs) != len(doc["cases"]):
        return False
    return all(
        isinstance(out, list)
        and len(out) == len(c["expected"])
        and all(
            isinstance(g, float) and abs(g - w) <= doc["tolerance"] * max(1.0, abs(w))
            for g, w in zip(out, c["expected"])
        )
        for c, out in zip(doc["cases"], outputs)
    )


def check(checker, doc, source):
    collected = json.loads(checker.collect(source, inputs_of(doc)))
    passed = judge(doc, collected)
    message = (
        "" if passed else checker.explain(str(EXERCISE), json.dumps({"outputs": [c["expected"] for c in doc["cases"]]}))
    )
    return passed, message


SUM_INTO_FOUR = (
    "        out.extend(blended)",
    "        out = [a + b for a, b in zip(out, blended)] if out else blended",
)
SUM_INTO_SIXTEEN = (
    ("    out = []\n", "    out = [0.0] * N_EMBD\n"),
    ("        out.extend(blended)", "        for j in range(HEAD_DIM):\n            out[j] += blended[j]"),
)
# The mistakes only a whole function can make -> (how, what the first two tiers say, a text on the line named).
LEVEL2 = {
    "no_sqrt": (edit((" / math.sqrt(HEAD_DIM)", "")), r"scaled down before the softmax", "scores = "),
    "no_softmax": (edit(("w = softmax(scores)", "w = scores")), r"used as weights directly", "w = scores"),
    "query_not_sliced": (
        edit(("q_h = q[start:start + HEAD_DIM]", "q_h = q")),
        r"Every head uses the first 4 numbers of the query",
        "q_h = q",
    ),
    "heads_summed": (edit(SUM_INTO_FOUR), r"Your heads are added up.*glues them side by side", "zip(out"),
    "heads_summed_in_place": (edit(*SUM_INTO_SIXTEEN), r"Your heads are added up.*on top of the earlier", "out[j] +="),
    "heads_averaged": (
        edit(("    return out\n", "    return [x / N_HEAD for x in out]\n"), SUM_INTO_FOUR),
        r"Your heads are averaged",
        None,
    ),
    "starter": (starter, r"gives back nothing.*return line", None),
    "empty": (edit(("        out.extend(blended)\n", "")), r"gives back an empty list", None),
}
# Level 1's mistakes, each a whole program: the same first message here (its starter is Level 1's own).
FROM_LEVEL1 = {name: row for name, row in LEVEL1.items() if name not in ("correct", "starter")}


def assert_says(source, message, pattern, needle):
    assert message, "a wrong answer gets words"
    idea, where, code = message.split(SEP)
    assert re.search(pattern, idea + "\n" + where, re.S), message
    if needle:
        assert re.search(rf"\b[Ll]ine {line_of(source, needle)}\b", where), (where, line_of(source, needle))
    assert idea.strip() and not CODE_IN_WORDS.search(idea), idea
    assert code.strip(), "every diagnosis has code to show on request"


def test_the_solution_passes_with_nothing_to_say(checker, cases_doc):
    passed, message = check(checker, cases_doc, solution())
    assert passed and message == "", message


def test_level1s_solution_passes_level2_too(checker, cases_doc):
    passed, _ = check(checker, cases_doc, (PYODIDE / "solution.py").read_text())
    assert passed


@pytest.mark.parametrize("name", list(LEVEL2))
def test_each_level2_mistake_has_its_first_message(checker, cases_doc, name):
    make, pattern, needle = LEVEL2[name]
    source = make()
    passed, message = check(checker, cases_doc, source)
    assert not passed, name
    assert_says(source, message, pattern, needle)


@pytest.mark.parametrize("name", list(FROM_LEVEL1))
def test_level1s_mistakes_fail_with_level1s_first_message(checker, cases_doc, name):
    make, pattern, needle = FROM_LEVEL1[name]
    source = make()
    passed, message = check(checker, cases_doc, source)
    assert not passed, name
    assert_says(source, message, pattern, needle)


# Level 2's mistakes that Level 1's tests already make (the same mistake, so the same message).
SAME_AS_LEVEL1 = {
    "no_sqrt": "scale_missing",
    "no_softmax": "no_softmax",
    "query_not_sliced": "query_unsliced",
    "starter": "returns_none",
}


def test_every_mistake_has_its_own_message(checker, cases_doc):
    messages = {}
    twins = set(SAME_AS_LEVEL1.values())
    for name, (make, _, _) in [*LEVEL2.items(), *((n, row) for n, row in FROM_LEVEL1.items() if n not in twins)]:
        _, message = check(checker, cases_doc, make())
        messages.setdefault(re.sub(r"\d+", "N", message), []).append(name)
    shared = {m: names for m, names in messages.items() if len(names) > 1}
    assert not shared, shared


def test_the_starter_has_the_signature_docstring_and_helpers_only(checker):
    exercise = checker.load_exercise(str(EXERCISE))
    assert exercise.STARTER == starter() and [name for name, _ in exercise.FUNCTIONS] == ["multi_head"]
    body = starter().split("def multi_head(q, keys, values):\n", 1)[1].split("\n\n\n", 1)[0]
    code = [line for line in body.split('"""')[-1].splitlines() if line.strip()]
    assert code == [exercise.PLACEHOLDER.rstrip("\n")], code
    assert re.findall(r"^def (\w+)\(", starter(), re.M) == ["dot", "matvec", "softmax", "rmsnorm", "multi_head"]


def test_the_learners_code_cannot_import_the_checks_or_microgpts_arithmetic(checker, cases_doc):
    for line in ("import microgpt_multi_head\n", "import microgpt_floats\n", "import exercise_checks\n"):
        passed, message = check(checker, cases_doc, line + solution())
        assert not passed and "ModuleNotFoundError" in message, (line, message)
