"""The build exercise without a browser: its checks name each mistake, under CPython.

The page (lesson/build/) hands the worker the inputs of one function's Check,
computed from the teaching graph ``four_heads.steps.onnx`` on the learner's
prompt; the worker's ``calls.collect`` runs the learner's code and gives back
the numbers; the page compares them with the graph's tensors; only then does
``calls.explain`` load the exercise file and say what differs. This test
builds the same inputs and expected tensors here with onnxruntime, runs the
same two steps on a correct solution and on each mistake, and reads the words.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from export import teaching_graph
from export.artefacts import Artefacts
from export.generate import prompt_history
from export.lesson.build_weights import MODEL
from export.windows import context_window
from tests.pyodide.sandbox_home import sandbox_home

ROOT = Path(__file__).resolve().parents[2]
PYODIDE = ROOT / "site_src" / "pyodide"
EXERCISE = PYODIDE / "exercises" / "build_attention.py"
SOLUTION = Path(__file__).with_name("build_solution.py")
SEP = "\x1e"
PROMPT = "once upon a time there was a little girl named lily . she liked to"  # 16 tokens with BOS
LAYERS = ("W_Q", "b_Q", "W_K", "b_K", "W_V", "b_V", "W_O", "b_O")


def solution() -> str:
    return SOLUTION.read_text()


def edit(*pairs):
    def make():
        source = solution()
        for old, new in pairs:
            assert source.count(old) == 1, old
            source = source.replace(old, new)
        return source

    return make


@pytest.fixture(scope="module")
def graph():
    """The teaching graph's tensors on the prompt: the last n rows (BOS included), as the page takes them."""
    art = Artefacts()
    vocab = json.loads(art.vocab.read_text())
    ids = prompt_history(vocab["itos"], PROMPT)
    assert len(ids) == 16
    out = teaching_graph.run(teaching_graph.session(art.teaching_onnx(MODEL)), context_window(ids, vocab["T"]))
    n = len(ids)
    doc = json.loads(art.build_weights.read_text())
    heads = doc["heads"]

    def rows(name):  # [1, heads, T, dh] -> the last n rows, heads joined: n x d
        return out[name][0, :, -n:].transpose(1, 0, 2).reshape(n, -1).tolist()

    def per_head(name, square=False):
        t = out[name][0, :, -n:]
        return [(t[h][:, -n:] if square else t[h]).tolist() for h in range(heads)]

    weights = {k: doc[k] for k in LAYERS}
    E = out["E"][0, -n:].tolist()
    Q, K, V = per_head("Q"), per_head("K"), per_head("V")
    S, A = per_head("scores", True), per_head("A", True)
    tests = {
        "project": (
            [
                [E, weights["W_Q"], weights["b_Q"]],
                [E, weights["W_K"], weights["b_K"]],
                [E, weights["W_V"], weights["b_V"]],
            ],
            [rows("Q"), rows("K"), rows("V")],
        ),
        "split_heads": ([[rows("Q"), heads]], [Q]),
        "scores": ([[Q[h], K[h]] for h in range(heads)], S),
        "causal_softmax": ([[S[h]] for h in range(heads)], A),
        "blend": ([[A[h], V[h]] for h in range(heads)], per_head("messages")),
        "multi_head_attention": ([[E, weights, heads]], [out["update"][0, -n:].tolist()]),
    }
    tokens = ["BOS"] + [vocab["itos"][i] for i in ids[1:]]  # as the page names the rows
    return {"tests": tests, "tokens": tokens, "heads": heads}


@pytest.fixture(scope="module")
def checker(tmp_path_factory):
    with sandbox_home(tmp_path_factory):
        import calls
        import sandbox

        sandbox.start()
        yield calls


def judge(got, want, tolerance) -> bool:
    """What the page decides: every number within the tolerance of the graph's, the same shape."""
    if isinstance(want, list):
        return (
            isinstance(got, list) and len(got) == len(want) and all(judge(g, w, tolerance) for g, w in zip(got, want))
        )
    return isinstance(got, float) and abs(got - want) <= tolerance * max(1.0, abs(want))


def check(checker, graph, function, source):
    calls, expected = graph["tests"][function]
    inputs = json.dumps({"function": function, "calls": calls, "tokens": graph["tokens"], "n_heads": graph["heads"]})
    collected = json.loads(checker.collect(source, inputs))
    exercise = checker.load_exercise(str(EXERCISE))
    passed = (
        not collected["failed"] and not collected["stop"] and judge(collected["outputs"], expected, exercise.TOLERANCE)
    )
    message = checker.explain(str(EXERCISE), json.dumps({"outputs": expected}))
    return passed, message


SOFTMAX_ROW = "        e = [math.exp(s - top) if j <= i else 0.0 for j, s in enumerate(row)]"
MAX_ROW = "        top = max(row[:i + 1])"
SCALE = "/ math.sqrt(d)"
SPLIT = "    return [[x[h * d:(h + 1) * d] for x in X] for h in range(n_heads)]"
EXTEND = "            row.extend(messages[h][t])"
WO = '    return project(joined, weights["W_O"], weights["b_O"])'
COLUMN_SOFTMAX = """def causal_softmax(S):
    n = len(S)
    A = [[0.0] * n for _ in range(n)]
    for j in range(n):
        col = [S[i][j] for i in range(j, n)]
        top = max(col)
        e = [math.exp(s - top) for s in col]
        for i, x in zip(range(j, n), e):
            A[i][j] = x / sum(e)
    return A


def blend("""

# Mistake -> (the function checked, how to make it, what the first two tiers must say, a text on the line named).
MISTAKES = {
    "project_no_bias": ("project", edit((" + b_o for W_o", " for W_o")), r"without its bias.*b\[o\]", "zip(W_o, x)"),
    "project_transposed": (
        "project",
        edit(
            (
                "rows.append([sum(w * xi for w, xi in zip(W_o, x)) + b_o for W_o, b_o in zip(W, b)])",
                "rows.append([sum(W[i][o] * xi for i, xi in enumerate(x)) + b[o] for o in range(len(b))])",
            )
        ),
        r"columns of W: W is stored \[out, in\]",
        "W[i][o]",
    ),
    "split_by_position": (
        "split_heads",
        edit((SPLIT, "    return [X[h * d:(h + 1) * d] for h in range(n_heads)]")),
        r"split by position",
        "X[h * d",
    ),
    "split_strided": (
        "split_heads",
        edit((SPLIT, "    return [[x[h::n_heads] for x in X] for h in range(n_heads)]")),
        r"every 4th coordinate",
        "x[h::n_heads]",
    ),
    "split_token_major": (
        "split_heads",
        edit((SPLIT, "    return [[x[h * d:(h + 1) * d] for h in range(n_heads)] for x in X]")),
        r"one entry per token.*heads\[h\]\[t\]",
        None,
    ),
    "scores_unscaled": (
        "scores",
        edit((SCALE, "")),
        r"Your projections and heads match.*not scaled.*√16 = 4",
        "zip(q, k)",
    ),
    "scores_by_size": ("scores", edit((SCALE, "/ d")), r"head size, 16, instead of its square root", "/ d"),
    "scores_transposed": (
        "scores",
        edit(("for k in k_h] for q in q_h]", "for q in q_h] for k in k_h]")),
        r"S\[i\]\[j\] is the model's S\[j\]\[i\]",
        None,
    ),
    "future_not_masked": (
        "causal_softmax",
        edit((MAX_ROW, "        top = max(row)"), (SOFTMAX_ROW, "        e = [math.exp(s - top) for s in row]")),
        r"^Your scores match the model's\. The weights of receiver 0 \('BOS'\) are not zero on "
        r"source 1 \('once'\).*: the future is not hidden\.",
        "math.exp",
    ),
    "future_set_to_zero": (
        "causal_softmax",
        edit(
            (MAX_ROW, "        row = [s if j <= i else 0.0 for j, s in enumerate(row)]\n        top = max(row)"),
            (SOFTMAX_ROW, "        e = [math.exp(s - top) for s in row]"),
        ),
        r"the future is not hidden\. Setting a later score to 0 does not hide it",
        "math.exp",
    ),
    "softmax_wrong_axis": (
        "causal_softmax",
        edit(("def causal_softmax(S):", "def causal_softmax_rows(S):"), ("\n\ndef blend(", "\n\n" + COLUMN_SOFTMAX)),
        r"columns add up to 1, not your rows",
        "for s in col]",
    ),
    "softmax_unnormalized": (
        "causal_softmax",
        edit(("        A.append([x / total for x in e])", "        A.append(e)")),
        r"add up to .*, not 1",
        None,
    ),
    "blend_transposed": ("blend", edit(("for weights in A]", "for weights in zip(*A)]")), r"column i of A", None),
    "mha_unscaled": ("multi_head_attention", edit((SCALE, "")), r"not scaled.*√16 = 4", "zip(q, k)"),
    "mha_scaled_by_size": (
        "multi_head_attention",
        edit((SCALE, "/ d")),
        r"divided by the head size, 16, instead of its square root",
        "/ d",
    ),
    "mha_future_not_masked": (
        "multi_head_attention",
        edit((MAX_ROW, "        top = max(row)"), (SOFTMAX_ROW, "        e = [math.exp(s - top) for s in row]")),
        r"the future is not hidden",
        "math.exp",
    ),
    "mha_softmax_wrong_axis": (
        "multi_head_attention",
        edit(("def causal_softmax(S):", "def causal_softmax_rows(S):"), ("\n\ndef blend(", "\n\n" + COLUMN_SOFTMAX)),
        r"down each source's column",
        "for s in col]",
    ),
    "mha_split_by_position": (
        "multi_head_attention",
        edit(
            (SPLIT, "    size = -(-len(X) // n_heads)\n    return [X[h * size:(h + 1) * size] for h in range(n_heads)]")
        ),
        r"split_heads splits the rows by position",
        "return [X[",
    ),
    "mha_split_strided": (
        "multi_head_attention",
        edit((SPLIT, "    return [[x[h::n_heads] for x in X] for h in range(n_heads)]")),
        r"every 4th coordinate",
        "x[h::n_heads]",
    ),
    "mha_heads_reversed": (
        "multi_head_attention",
        edit(
            (
                "        for h in range(n_heads):\n            row.extend",
                "        for h in reversed(range(n_heads)):\n            row.extend",
            )
        ),
        r"joined in the wrong order",
        "reversed(",
    ),
    "mha_no_wo": ("multi_head_attention", edit((WO, "    return joined")), r"W_O is left out", "return joined"),
    "mha_no_bo": (
        "multi_head_attention",
        edit((WO, '    return project(joined, weights["W_O"], [0.0] * len(weights["b_O"]))')),
        r"b_O: the output bias is left out",
        'weights["W_O"]',
    ),
    "mha_no_bq": (
        "multi_head_attention",
        edit(('project(E, weights["W_Q"], weights["b_Q"])', 'project(E, weights["W_Q"], [0.0] * 64)')),
        r"queries leave out their bias b_Q",
        'weights["W_Q"]',
    ),
    "mha_append": (
        "multi_head_attention",
        edit((EXTEND, "            row.append(messages[h][t])")),
        r"4 lists, one per head, instead of 64 numbers.*append",
        "row.append",
    ),
    # The messages gathered by a loop of appends (right) above the row's append (the mistake): the
    # line named is the row's, not the first append of the function.
    "mha_append_after_appends": (
        "multi_head_attention",
        edit(
            (EXTEND, "            row.append(messages[h][t])"),
            (
                "    messages = [blend(causal_softmax(scores(Q[h], K[h])), V[h]) for h in range(n_heads)]",
                "    messages = []\n    for h in range(n_heads):\n        messages.append(blend(causal_softmax(scores(Q[h], K[h])), V[h]))",
            ),
        ),
        r"4 lists, one per head, instead of 64 numbers.*append",
        "row.append",
    ),
    "starter": (
        "project",
        lambda: _starter(),
        r"Your project gives back an empty list, where the model's Q rows hold "
        r"16 × 64 numbers",
        "return rows",
    ),
    "missing": ("blend", edit(("def blend(A, v_h):", "def blended(A, v_h):")), r"does not define one", None),
    "syntax": ("scores", edit((SCALE, "/ math.sqrt(d")), r"cannot read your code", None),
}


def _starter() -> str:
    tree = ast.parse(EXERCISE.read_text())
    return next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "STARTER"
    )


def line_of(source: str, needle: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if needle in line)


@pytest.mark.parametrize(
    "function", ["project", "split_heads", "scores", "causal_softmax", "blend", "multi_head_attention"]
)
def test_the_solution_passes_every_check_with_nothing_to_say(checker, graph, function):
    passed, message = check(checker, graph, function, solution())
    assert passed and message == "", message


@pytest.mark.parametrize("name", list(MISTAKES))
def test_each_mistake_fails_with_its_first_difference_in_words(checker, graph, name):
    function, make, pattern, needle = MISTAKES[name]
    source = make()
    passed, message = check(checker, graph, function, source)
    assert not passed, name
    parts = message.split(SEP)
    assert len(parts) == 3, message
    idea, where, code = parts
    assert re.search(pattern, idea + "\n" + where, re.S), message
    if needle:
        assert re.search(rf"\bLine {line_of(source, needle)}\b", where), (where, line_of(source, needle))


def test_the_starter_defines_every_function_in_unlocking_order(checker):
    exercise = checker.load_exercise(str(EXERCISE))
    names = re.findall(r"^def (\w+)\(", exercise.STARTER, re.M)
    assert names == [name for name, _ in exercise.FUNCTIONS]
    assert names == re.findall(r"^def (\w+)\(", solution(), re.M)


def test_the_learners_code_cannot_import_the_checks(checker, graph):
    """The exercise file is loaded by path after the numbers are collected: not importable by name."""
    source = solution().replace("def project(E, W, b):", "import build_attention\n\n\ndef project(E, W, b):")
    passed, message = check(checker, graph, "project", source)
    assert not passed and "ModuleNotFoundError" in message, message


THIRD = '''"""A throwaway exercise: one file, nothing else."""
STARTER = r\'\'\'def double(x):
    ...
\'\'\'
FUNCTIONS = (("double", "twice the number"),)
TOLERANCE = 1e-9


def explain(job, expected):
    if job["outputs"] == expected["outputs"]:
        return None
    return ("Your double gives " + repr(job["outputs"]) + ", the check wants " + repr(expected["outputs"]) + ".",
            "Line 2: multiply by 2.", "return 2 * x")
'''


def test_a_third_exercise_is_one_new_file(checker, tmp_path):
    """The shared Check (calls.py) serves any exercise file: a throwaway one, written here, works unchanged."""
    third = tmp_path / "third.py"
    third.write_text(THIRD)
    inputs = json.dumps({"function": "double", "calls": [[2.0], [5.0]], "tokens": [], "n_heads": 1})
    expected = json.dumps({"outputs": [4.0, 10.0]})
    assert json.loads(checker.collect("def double(x):\n    return 2 * x\n", inputs))["outputs"] == [4.0, 10.0]
    assert checker.explain(str(third), expected) == ""
    assert json.loads(checker.collect("def double(x):\n    return x + 2\n", inputs))["outputs"] == [4.0, 7.0]
    idea, where, code = checker.explain(str(third), expected).split(SEP)
    assert "the check wants [4.0, 10.0]" in idea and code == "return 2 * x"
