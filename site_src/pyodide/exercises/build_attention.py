"""Build it yourself: causal multi-head attention for the trained four-head model, one function at a time.

One exercise, one file: the starter the learner edits (``STARTER``), the
functions in the order they unlock (``FUNCTIONS``), and the checks' words
(``explain``). The page reads ``STARTER`` and ``FUNCTIONS`` from this file;
the worker writes the file for Python only after the learner's code has given
its numbers (site_src/pyodide/calls.py), so that code can never call the
variants below. The verdict is the page's: it compares the learner's numbers
with the teaching graph's tensors (the shipped four-head model's ``.steps.onnx``) within
``TOLERANCE``; ``explain`` only says, in words, what differs.

A job (calls.collect) holds the page's inputs (``doc``: function, calls,
tokens, n_heads), the learner's ``outputs`` and ``problem``, their function
``fn`` and namespace ``ns``. ``expected`` holds the graph's tensor per call.
A Hint is three tiers: the idea in words, where (the line), the code.
"""

import ast
import math
import re

STARTER = r'''import math

# E: one row of 64 numbers per token of your prompt, BOS first
#    (row t = token t's row + position t's row).
# Every weight matrix is stored as nn.Linear stores it, [out, in]:
#   output o = sum over i of W[o][i] * x[i], plus the bias b[o]
# Plain Python lists of floats. Check calls a function with the
# model's own numbers; Run runs this file as it is, so try your
# functions on small lists of your own and print what they give.


def project(E, W, b):
    """Each row x of E times W ([out, in]), plus the bias b:
    one output row per row of E."""
    rows = []
    for x in E:
        ...
    return rows


def split_heads(X, n_heads):
    """One list of rows per head: head h keeps coordinates
    h*d ... h*d + d - 1 of every row (d = 64 // n_heads)."""
    ...


def scores(q_h, k_h):
    """S[i][j]: receiver i's query row dotted with source j's
    key row, divided by the root of the head size."""
    ...


def causal_softmax(S):
    """Each row of S to weights that add up to 1; receiver i
    sees sources 0 ... i, the later ones get 0."""
    ...


def blend(A, v_h):
    """Receiver i's message: the value rows weighted by A[i]
    (one number per coordinate of a value row)."""
    ...


def multi_head_attention(E, weights, n_heads):
    """The update rows: project E, split, score, causal softmax,
    blend, join the heads, then W_O and b_O. weights holds
    "W_Q", "b_Q", "W_K", "b_K", "W_V", "b_V", "W_O", "b_O"."""
    ...
'''

# In unlocking order: (name, what the Check compares it with in the teaching graph).
FUNCTIONS = (
    ("project", "Q, K and V before the split: E times W_Q, W_K, W_V plus their biases"),
    ("split_heads", "Q, split into 4 heads of 16 coordinates"),
    ("scores", "each head's scores, Q Kᵀ / √16"),
    ("causal_softmax", "each head's attention weights A"),
    ("blend", "each head's messages, A V"),
    ("multi_head_attention", "the update rows, W_O (the joined messages) + b_O"),
)
# float32 graph against Python floats: |yours - graph| <= TOLERANCE * max(1, |graph|)
TOLERANCE = 1e-4

# The lines the code tier shows (those of a correct solution).
CODE = {
    "project": "rows.append([sum(w * xi for w, xi in zip(W_o, x)) + b_o for W_o, b_o in zip(W, b)])",
    "split_heads": "d = len(X[0]) // n_heads\nreturn [[x[h * d:(h + 1) * d] for x in X] for h in range(n_heads)]",
    "scores": "d = len(q_h[0])\nreturn [[sum(a * b for a, b in zip(q, k)) / math.sqrt(d) for k in k_h] for q in q_h]",
    "causal_softmax": (
        "A = []\nfor i, row in enumerate(S):\n    top = max(row[:i + 1])\n"
        "    e = [math.exp(s - top) if j <= i else 0.0 for j, s in enumerate(row)]\n"
        "    A.append([x / sum(e) for x in e])\nreturn A"
    ),
    "blend": (
        "d = len(v_h[0])\nreturn [[sum(a * v[c] for a, v in zip(weights, v_h)) for c in range(d)] for weights in A]"
    ),
    "join": (
        "joined = []\nfor t in range(len(E)):\n    row = []\n    for h in range(n_heads):\n"
        "        row.extend(messages[h][t])\n    joined.append(row)"
    ),
    "wo": 'return project(joined, weights["W_O"], weights["b_O"])',
}
EARLIER = {
    "project": "",
    "split_heads": "Your projections match the model's. ",
    "scores": "Your projections and heads match the model's. ",
    "causal_softmax": "Your scores match the model's. ",
    "blend": "Your scores and weights match the model's. ",
    "multi_head_attention": "",
}


def Hint(idea, where="", code=""):
    return (str(idea), str(where), str(code))


# ---------------------------------------------------------------------------
# Comparing numbers.
# ---------------------------------------------------------------------------
def close(a, b):
    return abs(a - b) <= TOLERANCE * max(1.0, abs(b))


def shape(x):
    """The nested lengths of x ([] for a number); None when its rows are ragged."""
    if not isinstance(x, list):
        return []
    if not x:
        return [0]
    inner = [shape(v) for v in x]
    return [len(x)] + inner[0] if all(s == inner[0] for s in inner) and inner[0] is not None else None


def first_difference(got, want, at=()):
    """The index path of the first number that differs (within TOLERANCE), or None when all agree."""
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return at
        for i, (g, w) in enumerate(zip(got, want)):
            found = first_difference(g, w, at + (i,))
            if found is not None:
                return found
        return None
    if isinstance(got, list) or not isinstance(got, float) or math.isnan(got) or not close(got, want):
        return at
    return None


def same(got, want):
    return first_difference(got, want) is None


def at(x, path):
    for i in path:
        x = x[i]
    return x


# ---------------------------------------------------------------------------
# The operation, with the mistakes learners make as switches.
# ---------------------------------------------------------------------------
def project(E, W, b, bias=True, transposed=False):
    if transposed:
        W = [list(col) for col in zip(*W)]
    return [[sum(w * x for w, x in zip(row, e)) + (bo if bias else 0.0) for row, bo in zip(W, b)] for e in E]


def split(X, n_heads, by="coordinate"):
    d = len(X[0]) // n_heads
    if by == "stride":
        return [[x[h::n_heads] for x in X] for h in range(n_heads)]
    if by == "position":
        size = -(-len(X) // n_heads)
        return [X[h * size : (h + 1) * size] for h in range(n_heads)]
    if by == "token_major":
        return [[x[h * d : (h + 1) * d] for h in range(n_heads)] for x in X]
    return [[x[h * d : (h + 1) * d] for x in X] for h in range(n_heads)]


def score(q_h, k_h, scale="root", transposed=False):
    d = len(q_h[0])
    div = {"root": math.sqrt(d), "size": d, "none": 1.0, "root_model": math.sqrt(64)}[scale]
    S = [[sum(a * b for a, b in zip(q, k)) / div for k in k_h] for q in q_h]
    return [list(c) for c in zip(*S)] if transposed else S


def _softmax(row):
    top = max(row)
    e = [math.exp(s - top) for s in row]
    total = sum(e)
    return [x / total for x in e]


def softmax(S, mask="causal", axis="row"):
    n = len(S)
    if mask == "zero":  # the future's scores set to 0 instead of hidden
        S = [[s if j <= i else 0.0 for j, s in enumerate(row)] for i, row in enumerate(S)]
        mask = "none"
    if axis == "column":
        cols = [[S[i][j] for i in range(n) if mask == "none" or j <= i] for j in range(n)]
        A = [[0.0] * n for _ in range(n)]
        for j, col in enumerate(cols):
            rows = [i for i in range(n) if mask == "none" or j <= i]
            for i, w in zip(rows, _softmax(col)):
                A[i][j] = w
        return A
    if mask == "unnormalized":
        return [[math.exp(s) if j <= i else 0.0 for j, s in enumerate(row)] for i, row in enumerate(S)]
    out = []
    for i, row in enumerate(S):
        seen = row if mask == "none" else row[: i + 1]
        out.append(_softmax(seen) + [0.0] * (n - len(seen)))
    return out


def blend_rows(A, v_h, transposed=False):
    if transposed:
        A = [list(c) for c in zip(*A)]
    d = len(v_h[0])
    return [[sum(a * v[c] for a, v in zip(w, v_h)) for c in range(d)] for w in A]


class Attention:
    """The whole operation on one (E, weights), its shared parts computed once for every variant."""

    def __init__(self, E, weights, n_heads):
        self.E, self.w, self.n = E, weights, n_heads
        self.qkv = {k: project(E, weights[f"W_{k}"], weights[f"b_{k}"]) for k in "QKV"}
        self._messages = {}

    def run(
        self, bias_off="", by="coordinate", scale="root", mask="causal", axis="row", order="forward", wo=True, b_o=True
    ):
        key = (bias_off, by, scale, mask, axis)
        if key not in self._messages:  # the heads' messages, shared by the variants that only join or mix them
            qkv = dict(self.qkv)
            if bias_off:
                qkv[bias_off] = project(self.E, self.w[f"W_{bias_off}"], self.w[f"b_{bias_off}"], bias=False)
            Q, K, V = (split(qkv[k], self.n, by) for k in "QKV")
            self._messages[key] = [
                blend_rows(softmax(score(Q[h], K[h], scale), mask, axis), V[h]) for h in range(self.n)
            ]
        messages = self._messages[key]
        heads = list(range(self.n))[::-1] if order == "reversed" else range(self.n)
        joined = [[c for h in heads for c in messages[h][t]] for t in range(len(self.E))]
        return project(joined, self.w["W_O"], self.w["b_O"], bias=b_o) if wo else joined


# ---------------------------------------------------------------------------
# Where in the learner's code.
# ---------------------------------------------------------------------------
def _function_node(source, name):
    """The ``def`` of function ``name`` in ``source`` (an ast node), or None."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    return next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _function_span(source, name):
    """(first line, last line, the docstring's lines) of function ``name`` in ``source``, or None."""
    node = _function_node(source, name)
    if node is None:
        return None
    doc = set()
    first = node.body[0] if node.body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(getattr(first, "value", None), ast.Constant)
        and isinstance(first.value.value, str)
    ):
        doc = set(range(first.lineno, first.end_lineno + 1))
    return node.lineno, node.end_lineno, doc


def line_where(source, name, pattern=None):
    """(line number, text) of the first code line of function ``name`` matching ``pattern`` (or its def line).

    ``pattern`` may be a tuple of patterns, tried in order: the first that any line matches wins.
    """
    span = _function_span(source, name)
    if span is None:
        return None
    start, end, doc = span
    lines = source.splitlines()
    code = [i for i in range(start + 1, end + 1) if i not in doc and not lines[i - 1].strip().startswith("#")]
    for one in (pattern if isinstance(pattern, tuple) else (pattern,)) if pattern else ():
        for i in code:
            if re.search(one, lines[i - 1]):
                return i, lines[i - 1].strip()
    return start, lines[start - 1].strip()


def where(source, name, pattern, what):
    found = line_where(source, name, pattern)
    if found is None:
        return what
    line, text = found
    return f"Line {line} ({text}): {what}"


# ---------------------------------------------------------------------------
# The words.
# ---------------------------------------------------------------------------
def _token(job, t):
    tokens = job["doc"].get("tokens") or []
    return f"{t} ({tokens[t]!r})" if 0 <= t < len(tokens) else str(t)


def _traceback_line(exc):
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "exercise.py"]
    return frames[-1] if frames else None


def _problem_hint(job, name):
    problem = job.get("problem") or {}
    kind = problem.get("kind")
    if kind == "syntax":
        exc = problem["exc"]
        return Hint(
            "Python cannot read your code, so nothing could be checked yet.",
            f"Line {exc.lineno}: {exc.msg}.",
            (exc.text or "").rstrip(),
        )
    if kind == "stop":
        return Hint(problem["note"])
    if kind == "missing":
        return Hint(
            f"The check calls a function named {name}, and your code does not define one.",
            f"No line of your code starts with def {name}. Reset brings the starter code back.",
            f"def {name}(...):",
        )
    if kind == "script_error":
        exc = problem["exc"]
        frame = _traceback_line(exc)
        return Hint(
            f"Your code stops with an error before it reaches {name}, so there is nothing to check yet.",
            f"Line {frame.lineno if frame else '?'} stops with {type(exc).__name__}: {exc}.",
            "",
        )
    if kind == "raised":
        return _raised_hint(job, name, problem["exc"])
    if kind == "not_numbers":
        return _not_numbers_hint(job, name, problem)
    if kind == "error_after":
        exc = problem["exc"]
        frame = _traceback_line(exc)
        return Hint(
            f"Your {name} gives numbers, but the lines after it stop with an error.",
            f"Line {frame.lineno if frame else '?'} stops with {type(exc).__name__}: {exc}.",
            "",
        )
    if kind == "checker":
        return Hint(f"The check itself stopped ({problem.get('error')}); press Check again.")
    return None


def _appended_heads(value, n_heads, width):
    """A row that holds the heads' lists of ``width`` numbers instead of their numbers (append, not extend)."""
    return (
        isinstance(value, list)
        and len(value) == n_heads
        and all(isinstance(v, list) and len(v) == width and all(isinstance(c, (int, float)) for c in v) for v in value)
    )


def _rows_appended_whole(source, name):
    """Names of the lists function ``name`` appends whole to another (``joined.append(row)``): the rows."""
    fn = _function_node(source, name)
    if fn is None:
        return []
    return [
        call.args[0].id
        for call in ast.walk(fn)
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "append"
        and len(call.args) == 1
        and isinstance(call.args[0], ast.Name)
    ]


def _append_hint(job):
    # The faulty append is the one that fills a row (a list later appended whole to the joined rows),
    # not the first append of the function: gathering the heads' messages by appends is right.
    source = job.get("source", "")
    rows = _rows_appended_whole(source, "multi_head_attention")
    patterns = tuple(rf"\b{re.escape(r)}\.append\(" for r in rows) + (r"\.append\((?!row\))",)
    line = where(source, "multi_head_attention", patterns, "append adds a head's list as one item.")
    return Hint(
        "Each joined row holds 4 lists, one per head, instead of 64 numbers: the heads' messages were "
        "added to the row as whole lists, so W_O cannot multiply them. Add each head's 16 numbers to the "
        "row one by one (extend), so the joined row is 64 numbers.",
        line,
        CODE["join"],
    )


def _raised_hint(job, name, exc):
    import traceback

    n_heads = job["doc"].get("n_heads", 4)
    if name == "multi_head_attention":
        found = _own_split_hint(job)
        if found:
            return found
        width = len(_args(job, 0)[0][0]) // n_heads
        for frame, _ in traceback.walk_tb(exc.__traceback__):
            if frame.f_code.co_filename != "exercise.py":
                continue
            for value in list(frame.f_locals.values()):
                rows = value if isinstance(value, list) else []
                if rows and (_appended_heads(rows, n_heads, width) or _appended_heads(rows[0], n_heads, width)):
                    return _append_hint(job)
    frame = _traceback_line(exc)
    return Hint(
        f"Your {name} stopped with an error on the model's numbers.",
        f"Line {frame.lineno if frame else '?'} stops with {type(exc).__name__}: {exc}.",
        CODE.get(name, ""),
    )


def _not_numbers_hint(job, name, problem):
    what, path, value = problem["what"], problem["path"], problem.get("value")
    if value is None:
        return Hint(
            f"Your {name} gives back nothing (None): it has no return, or returns before computing.",
            where(job.get("source", ""), name, None, "add a return with the result."),
            CODE.get(name, ""),
        )
    return Hint(
        f"Your {name} gives back {what} at {path or 'the top'}, where the check wants only lists of numbers.",
        where(job.get("source", ""), name, r"\breturn\b", "return lists of floats."),
        CODE.get(name, ""),
    )


def _shape_words(s):
    if s is None:
        return "lists of different lengths"
    if not s:
        return "a single number"
    if s == [0]:
        return "an empty list"
    return "a list of " + " × ".join(str(n) for n in s) + " numbers"


def explain(job, expected):
    """The Hint for the job's numbers against the graph's (None when they agree)."""
    name = job["doc"]["function"]
    hint = _problem_hint(job, name)
    if hint:
        return hint
    want = expected["outputs"]
    got = job["outputs"]
    if len(got) == len(want) and all(same(g, w) for g, w in zip(got, want)):
        return None
    return EXPLAIN[name](job, got, want)


def _generic(job, name, got, want, what):
    for g, w in zip(got, want):
        if shape(g) != shape(w):
            return Hint(
                f"{EARLIER[name]}Your {name} gives back {_shape_words(shape(g))}, where the model's {what} "
                f"hold {' × '.join(str(n) for n in shape(w))} numbers.",
                where(job.get("source", ""), name, r"\breturn\b", "check what it returns."),
                CODE.get(name, ""),
            )
        path = first_difference(g, w)
        if path is not None:
            index = "".join(f"[{p}]" for p in path)
            return Hint(
                f"{EARLIER[name]}Your {name} differs from the model's {what} first at {index}: yours "
                f"{at(g, path):.6g}, the model's {at(w, path):.6g}.",
                where(job.get("source", ""), name, None, "compare this function with its docstring."),
                CODE.get(name, ""),
            )
    return Hint(f"Your {name} gives {len(got)} results where the check wants {len(want)}.")


def _args(job, i):
    return job["doc"]["calls"][i]


def _first_wrong_call(job, got, want):
    """(index, yours, the model's, the call's arguments) for the first call whose numbers differ, or None."""
    for i, (g, w) in enumerate(zip(got, want)):
        if not same(g, w):
            return i, g, w, _args(job, i)
    return None


def _explain_project(job, got, want):
    labels = "QKV"
    source = job.get("source", "")
    wrong = _first_wrong_call(job, got, want)
    if wrong is None:
        return None
    i, g, w, (E, W, b) = wrong
    if same(g, project(E, W, b, bias=False)):
        return Hint(
            f"Your {labels[i]} rows are E times W_{labels[i]} without its bias: every output o is missing + b[o].",
            where(source, "project", r"sum\(|\+=", "the bias b[o] is not added."),
            CODE["project"],
        )
    if same(g, project(E, W, b, transposed=True)):
        return Hint(
            "Your rows use the columns of W: W is stored [out, in], so output o is row W[o] (one "
            "weight per input coordinate) times x, plus b[o].",
            where(source, "project", r"W\[", "W is indexed [in][out] here."),
            CODE["project"],
        )
    return _generic(job, "project", [g], [w], f"{labels[i]} rows")


def _explain_split(job, got, want):
    source = job.get("source", "")
    g = got[0]
    X, n_heads = _args(job, 0)
    n, d = len(X), len(X[0]) // n_heads
    if shape(g) == [n, n_heads, d] or same(g, split(X, n_heads, "token_major")):
        return Hint(
            f"Your list has one entry per token, each holding {n_heads} heads; the check wants one list "
            "per head, each holding a row per token (heads[h][t]).",
            where(source, "split_heads", r"\breturn\b|append", "the two loops are the wrong way round."),
            CODE["split_heads"],
        )
    if (
        isinstance(g, list)
        and g
        and isinstance(g[0], list)
        and g[0]
        and isinstance(g[0][0], list)
        and len(g[0][0]) == len(X[0])
    ):
        return Hint(
            f"Head 1 holds whole rows of {len(X[0])} numbers for some tokens only: the rows were split "
            "by position (which tokens each head gets). Every head sees every token, through its own "
            f"{d} coordinates: head h keeps coordinates {d}h to {d}h + {d - 1} of every row.",
            where(source, "split_heads", r"X\[(?!0\])", "this slices the list of rows, not each row."),
            CODE["split_heads"],
        )
    if same(g, split(X, n_heads, "stride")):
        return Hint(
            f"Head 1 took every {n_heads}th coordinate (0, {n_heads}, {2 * n_heads}, …); the model's "
            f"head 1 reads {d} coordinates side by side: 0 to {d - 1}.",
            where(source, "split_heads", r"::", "a step of n_heads picks scattered coordinates."),
            CODE["split_heads"],
        )
    return _generic(job, "split_heads", got, want, "heads")


def _explain_scores(job, got, want):
    source = job.get("source", "")
    wrong = _first_wrong_call(job, got, want)
    if wrong is None:
        return None
    i, g, w, (q, k) = wrong
    d = len(q[0])
    if same(g, score(q, k, "none")):
        return Hint(
            f"{EARLIER['scores']}Your scores are {math.sqrt(d):g} times the model's: the dot products "
            f"are not scaled down by the root of the head size, √{d} = {math.sqrt(d):g}.",
            where(source, "scores", r"sum\(|\bdot\b", "the dot product is not divided."),
            CODE["scores"],
        )
    if same(g, score(q, k, "size")):
        return Hint(
            f"{EARLIER['scores']}Your scores are {math.sqrt(d):g} times smaller than the model's: "
            f"divided by the head size, {d}, instead of its square root, √{d} = {math.sqrt(d):g}.",
            where(source, "scores", r"/", "divide by the square root."),
            CODE["scores"],
        )
    if same(g, score(q, k, "root_model")):
        return Hint(
            f"{EARLIER['scores']}Your scores are divided by √64 = 8, the root of a whole row's size; "
            f"each head's dot products run over its {d} coordinates, so the model divides by "
            f"√{d} = {math.sqrt(d):g}.",
            where(source, "scores", r"/", "the wrong size."),
            CODE["scores"],
        )
    if same(g, score(q, k, transposed=True)):
        return Hint(
            f"{EARLIER['scores']}Your S[i][j] is the model's S[j][i]: row i must be receiver i's query "
            "against every source's key.",
            where(source, "scores", r"for\b", "the loops are swapped."),
            CODE["scores"],
        )
    return _generic(job, "scores", [g], [w], f"scores of head {i + 1}")


def _future_weight(job, g):
    for i, row in enumerate(g):
        for j in range(i + 1, len(row)):
            if isinstance(row[j], float) and abs(row[j]) > TOLERANCE:
                return i, j, row[j]
    return None


def _explain_softmax(job, got, want):
    source = job.get("source", "")
    wrong = _first_wrong_call(job, got, want)
    if wrong is None:
        return None
    h, g, w, (S,) = wrong
    if shape(g) != shape(w):
        return _generic(job, "causal_softmax", [g], [w], f"weights of head {h + 1}")
    future = _future_weight(job, g)
    if same(g, softmax(S, axis="column")) or same(g, softmax(S, "none", "column")):
        return Hint(
            f"{EARLIER['causal_softmax']}Your columns add up to 1, not your rows: the softmax ran down "
            "each source's column (over receivers) instead of along each receiver's row (over the "
            "sources it may see).",
            where(source, "causal_softmax", (r"exp", r"for\b"), "a softmax per column."),
            CODE["causal_softmax"],
        )
    if future is not None:
        i, j, value = future
        how = (
            " Setting a later score to 0 does not hide it: e⁰ = 1 still gets weight."
            if same(g, softmax(S, "zero"))
            else ""
        )
        return Hint(
            f"{EARLIER['causal_softmax']}The weights of receiver {_token(job, i)} are not zero on "
            f"source {_token(job, j)} ({value:.3g}): the future is not hidden.{how}",
            where(source, "causal_softmax", r"exp", "every source gets weight here, later ones too."),
            CODE["causal_softmax"],
        )
    if same(g, softmax(S, "unnormalized")):
        total = sum(g[-1])
        return Hint(
            f"{EARLIER['causal_softmax']}The weights of receiver {_token(job, len(g) - 1)} add up to "
            f"{total:.4g}, not 1: each e^score must be divided by the sum over the sources the "
            "receiver sees.",
            where(source, "causal_softmax", r"exp", "nothing divides by the sum."),
            CODE["causal_softmax"],
        )
    for i, row in enumerate(g):
        if not close(sum(row), 1.0):
            return Hint(
                f"{EARLIER['causal_softmax']}The weights of receiver {_token(job, i)} add up to {sum(row):.4g}, not 1.",
                where(source, "causal_softmax", r"sum\(|/", "check the sum."),
                CODE["causal_softmax"],
            )
    return _generic(job, "causal_softmax", [g], [w], f"weights of head {h + 1}")


def _explain_blend(job, got, want):
    source = job.get("source", "")
    wrong = _first_wrong_call(job, got, want)
    if wrong is None:
        return None
    h, g, w, (A, v) = wrong
    if same(g, blend_rows(A, v, transposed=True)):
        return Hint(
            f"{EARLIER['blend']}Your message for receiver i weights the values by column i of A (what "
            "each receiver gives source i); receiver i's message uses its own row A[i].",
            where(source, "blend", r"A\[|zip\(", "A is read by column."),
            CODE["blend"],
        )
    return _generic(job, "blend", [g], [w], f"messages of head {h + 1}")


# (switches of Attention.run, the idea, a pattern for the line, where's words, the code, the function holding it)
MHA_MISTAKES = (  # those that reuse the model's own messages first: they cost one W_O each
    (
        {"order": "reversed"},
        "Your heads are joined in the wrong order: head 4's 16 numbers come first. The joined "
        "row is head 1's messages, then head 2's, head 3's and head 4's.",
        (r"reversed", r"extend|append"),
        "the heads' order.",
        "join",
        "multi_head_attention",
    ),
    (
        {"wo": False},
        "Your update rows are the joined messages themselves: W_O is left out. The update is "
        "W_O (the joined row) + b_O.",
        r"\breturn\b",
        "W_O is not applied.",
        "wo",
        "multi_head_attention",
    ),
    (
        {"b_o": False},
        "Your update rows are W_O (the joined row) without b_O: the output bias is left out.",
        (r"W_O", r"\breturn\b"),
        "b_O is not added.",
        "wo",
        "multi_head_attention",
    ),
    (
        {"scale": "none"},
        "Your update rows are what the model gives when the scores are not scaled: the dot products "
        "are not divided by √16 = 4.",
        r"sum\(|\bdot\b",
        "the scores are not divided.",
        "scores",
        "scores",
    ),
    (
        {"scale": "size"},
        "Your update rows are what the model gives when the scores are divided by the head size, 16, "
        "instead of its square root, √16 = 4.",
        r"/",
        "divide by the square root.",
        "scores",
        "scores",
    ),
    (
        {"scale": "root_model"},
        "Your update rows are what the model gives when the scores are divided by √64 = 8 "
        "instead of √16 = 4, the root of one head's size.",
        r"/",
        "the wrong size.",
        "scores",
        "scores",
    ),
    (
        {"mask": "none"},
        "Your update rows are what the model gives when every receiver also reads the tokens after it: "
        "the future is not hidden.",
        r"exp",
        "later sources get weight here.",
        "causal_softmax",
        "causal_softmax",
    ),
    (
        {"mask": "zero"},
        "Your update rows are what the model gives when later scores are set to 0 instead of hidden: "
        "e⁰ = 1 still gets weight, so the future is not hidden.",
        r"exp|0",
        "later sources get weight here.",
        "causal_softmax",
        "causal_softmax",
    ),
    (
        {"axis": "column"},
        "Your update rows are what the model gives when the softmax runs down each source's column "
        "(over receivers) instead of along each receiver's row.",
        (r"exp", r"for\b"),
        "a softmax per column.",
        "causal_softmax",
        "causal_softmax",
    ),
    (
        {"by": "stride"},
        "Your update rows are what the model gives when head h takes every 4th coordinate instead of 16 side by side.",
        r"::",
        "scattered coordinates.",
        "split_heads",
        "split_heads",
    ),
    (
        {"bias_off": "Q"},
        "Your update rows are what the model gives when the queries leave out their bias b_Q.",
        r"W_Q|b_Q",
        "b_Q is not added.",
        "project",
        "multi_head_attention",
    ),
    (
        {"bias_off": "K"},
        "Your update rows are what the model gives when the keys leave out their bias b_K.",
        r"W_K|b_K",
        "b_K is not added.",
        "project",
        "multi_head_attention",
    ),
    (
        {"bias_off": "V"},
        "Your update rows are what the model gives when the values leave out their bias b_V.",
        r"W_V|b_V",
        "b_V is not added.",
        "project",
        "multi_head_attention",
    ),
)


def _explain_mha(job, got, want):
    source = job.get("source", "")
    g, w = got[0], want[0]
    E, weights, n_heads = _args(job, 0)
    if isinstance(g, list) and g and _appended_heads(g[0], n_heads, len(E[0]) // n_heads):
        return _append_hint(job)
    if shape(g) == shape(w):
        model = Attention(E, weights, n_heads)
        for switches, idea, pattern, what, code, holder in MHA_MISTAKES:
            if same(g, model.run(**switches)):
                fn = holder if _function_span(source, holder) else "multi_head_attention"
                return Hint(idea, where(source, fn, pattern, what), CODE[code])
    return _own_split_hint(job) or _generic(job, "multi_head_attention", got, want, "update rows")


def _own_split_hint(job):
    """Heads split by position give whole rows of a few tokens each, so the shapes rarely survive to the
    update rows: the learner's own split_heads, called on the model's queries, says so."""
    own = job.get("ns", {}).get("split_heads")
    E, weights, n_heads = _args(job, 0)
    if not callable(own):
        return None
    queries = project(E, weights["W_Q"], weights["b_Q"])
    try:
        heads = plain_or_none(own([list(r) for r in queries], n_heads))
    except Exception:  # noqa: BLE001 -- the learner's helper may fail on its own
        heads = None
    if heads is None or same(heads, split(queries, n_heads)):
        return None
    d = len(E[0]) // n_heads
    if (
        shape(heads) is None
        or (len(shape(heads)) == 3 and shape(heads)[2] == len(E[0]))
        or (heads and heads[0] and isinstance(heads[0][0], list) and len(heads[0][0]) == len(E[0]))
    ):
        idea = (
            f"Your split_heads splits the rows by position (which tokens each head gets): its heads hold whole "
            f"rows of {len(E[0])} numbers. Every head sees every token, through its own {d} coordinates."
        )
    else:
        idea = (
            f"Your split_heads does not split the rows the model's way: head h keeps coordinates {d}h to "
            f"{d}h + {d - 1} of every row."
        )
    return Hint(
        idea + " Check split_heads on its own first.",
        where(job.get("source", ""), "split_heads", r"\breturn\b", "the split."),
        CODE["split_heads"],
    )


def plain_or_none(value):
    try:
        return [plain_or_none(v) for v in value] if isinstance(value, (list, tuple)) else float(value)
    except (TypeError, ValueError):
        return None


EXPLAIN = {
    "project": _explain_project,
    "split_heads": _explain_split,
    "scores": _explain_scores,
    "causal_softmax": _explain_softmax,
    "blend": _explain_blend,
    "multi_head_attention": _explain_mha,
}
