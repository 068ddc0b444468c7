"""microgpt, Level 2: the learner writes the whole of multi_head, checked against the trained microgpt.

One exercise, one file (as build_attention.py): the starter the learner edits
(``STARTER``, whose ``PLACEHOLDER`` line is the body to write), the worked body
(``BODY``: the page puts it in place of the placeholder for "Show solution"),
the function the Check calls (``FUNCTIONS``), the tolerance, and the checks'
words (``explain``). The page (site_src/js/microgpt/level2.js) reads the first
four from this file; the worker writes it for Python only after the learner's
numbers are in (site_src/pyodide/calls.py), together with microgpt's float
arithmetic, so the learner's code never finds either.

The verdict is the page's, the same as Level 1's (site_src/js/microgpt/verdict.js:
every position of every case within ``TOLERANCE`` of microgpt's glued heads, and
after attn_wo too). ``explain`` only says what is wrong, in the words of Level 1's
diagnosis (site_src/pyodide/diagnosis.py, which knows every mistake of the two
blanks), after trying first the mistakes only a whole function can make.

A job (calls.collect) holds the page's inputs (``doc``: function, calls, cases,
n_head, attn_wo), the learner's ``outputs`` and ``problem``, their function ``fn``
and ``source``. ``expected`` holds microgpt's glued heads per case.
"""

import re

STARTER = r'''# Level 2: the whole of multi_head, inside the trained microgpt.
# Write its body (where the ... is), then press Run to try it
# or Check to grade it.
import json
import math

# The page put the trained model in Python's (in-browser) file system.
model = json.load(open("microgpt-trained.json"))
W = model["weights"]                 # every weight matrix, by name
LETTERS = model["uchars"]            # token id -> letter
BOS = model["bos"]                   # token id of the start/end marker
N_EMBD = model["config"]["n_embd"]   # 16 numbers in every vector
N_HEAD = model["config"]["n_head"]   # 4 heads
HEAD_DIM = N_EMBD // N_HEAD          # each head owns 4 of the 16 numbers


def dot(a, b):
    total = 0.0
    for x, y in zip(a, b):   # zip stops at the end of the shorter list
        total += x * y
    return total


def matvec(m, v):
    """Row i of matrix m dotted with v gives number i of the result."""
    return [dot(row, v) for row in m]


def softmax(scores):
    biggest = max(scores)
    ups = [math.exp(s - biggest) for s in scores]
    norm = sum(ups)
    return [u / norm for u in ups]


def rmsnorm(v):
    mean_square = dot(v, v) / len(v)
    return [x / math.sqrt(mean_square + 1e-5) for x in v]


def multi_head(q, keys, values):
    """q: the query of the current position (N_EMBD numbers).
    keys, values: one N_EMBD-number vector for every position
    up to this one.
    Head h (0 to N_HEAD - 1) owns numbers h * HEAD_DIM up to
    (h + 1) * HEAD_DIM - 1 of the query, of every key and of
    every value, and attends with those alone.
    Returns what the heads found, side by side, head 0 first:
    N_EMBD numbers."""
    ...   # your code here


# Try it: run "emma" up to the attention block and let the last
# letter look back.
name = "emma"
tokens = [BOS] + [LETTERS.index(c) for c in name]
keys, values = [], []
for pos, tok in enumerate(tokens):
    x = [a + b for a, b in zip(W["wte"][tok], W["wpe"][pos])]
    x = rmsnorm(rmsnorm(x))   # microgpt normalises at the input and in the block
    q = matvec(W["layer0.attn_wq"], x)
    keys.append(matvec(W["layer0.attn_wk"], x))
    values.append(matvec(W["layer0.attn_wv"], x))

out = multi_head(q, keys, values)
print("multi_head gave:", out)
'''
PLACEHOLDER = "    ...   # your code here\n"
BODY = r"""    out = []
    for h in range(N_HEAD):
        start = h * HEAD_DIM
        q_h = q[start:start + HEAD_DIM]
        k_h = [k[start:start + HEAD_DIM] for k in keys]
        v_h = [v[start:start + HEAD_DIM] for v in values]
        scores = [dot(q_h, k) / math.sqrt(HEAD_DIM) for k in k_h]
        w = softmax(scores)
        blended = [sum(weight * v[j] for weight, v in zip(w, v_h)) for j in range(HEAD_DIM)]
        out.extend(blended)
    return out
"""
# The function the Check calls, and what it is compared with.
FUNCTIONS = (("multi_head", "microgpt's four heads side by side, and after attn_wo, at every position of four names"),)
# Relative, as Level 1's (verdict.js TOLERANCE): any order of summation passes, a different computation does not.
TOLERANCE = 1e-9


def _hint(idea, where="", code=""):
    import diagnosis

    return diagnosis.Hint(idea, where, code)


def _is_flat(out):
    return isinstance(out, list) and bool(out) and all(isinstance(v, float) for v in out)


def _line(source, patterns):
    """' (line N)' for the first line of multi_head's body matching the first of ``patterns`` any line matches."""
    lines = source.splitlines()
    begin = next((i for i, line in enumerate(lines) if re.match(r"def multi_head\(", line)), None)
    if begin is None:
        return ""
    end = next((i for i in range(begin + 1, len(lines)) if lines[i].strip() and not lines[i][0].isspace()), len(lines))
    for pattern in patterns:
        for i in range(begin + 1, end):
            if re.search(pattern, lines[i].split("#", 1)[0]):
                return f" (line {i + 1})"
    return ""


# Where heads get added up: a zip over out, out[j] += ..., or out += with a sum.
SUMMED_LINE = (r"zip\([^)]*\bout\b", r"\bout\s*\[[^\]]*\]\s*\+=", r"\bout\s*=.*\+")


def _summed_hint(got, case, n_head, head_dim, source):
    """A Hint when out holds the heads' blends added up (or averaged) instead of glued side by side."""
    import diagnosis

    glued = diagnosis.floats.multi_head(case["q"], case["keys"], case["values"], n_head)[0]
    heads = [glued[h * head_dim : (h + 1) * head_dim] for h in range(n_head)]
    total = [sum(parts) for parts in zip(*heads)]
    n_embd = n_head * head_dim
    forms = (total, [t / n_head for t in total], total + [0.0] * (n_embd - head_dim))
    if not any(diagnosis._close(got, form) for form in forms):
        return None
    how = "averaged" if diagnosis._close(got, forms[1]) else "added up"
    unused = f" (the other {n_embd - head_dim} numbers of your out stay 0)" if diagnosis._close(got, forms[2]) else ""
    line = _line(source, SUMMED_LINE)
    return _hint(
        f"Your heads are {how}: their {head_dim}-number blends land on the same {head_dim} places of "
        f"out{unused}, so what each head found is mixed into one. multi_head glues them side by side "
        f"instead: head 1's "
        f"{head_dim} numbers, then head 2's, and so on, {n_embd} in all. Mixing the heads is attn_wo's job, "
        "after multi_head.",
        f"The line that combines the heads{line} puts each head's numbers on top of the earlier heads'; "
        "add them at the end of out instead, one head after the other.",
        "        out.extend(blended)   # after the earlier heads' numbers",
    )


def _empty_hint(n_embd, head_dim):
    return _hint(
        f"multi_head gives back an empty list: no head added its numbers to out. Each head works out "
        f"its {head_dim} blended numbers and adds them at the end of out, so out ends with {n_embd}.",
        "The loop over the heads never adds to out (or never runs): after a head's blend, add its numbers "
        "to out; return out after the loop.",
        BODY,
    )


def _call(fn, case):
    """The learner's function on ``case`` as it returns it (a tuple stays a tuple), or None if it fails."""
    import sys

    import sandbox

    quiet = sandbox._Quiet()
    sys.stdout = sys.stderr = quiet
    try:
        return fn(list(case["q"]), [list(k) for k in case["keys"]], [list(v) for v in case["values"]])
    except Exception:  # noqa: BLE001 -- the error itself is reported elsewhere
        return None
    finally:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__


def _problem_hint(job, cases, source):
    import diagnosis

    problem = job.get("problem") or {}
    kind = problem.get("kind")
    if kind == "syntax":
        return diagnosis._syntax_hint(problem["exc"])
    if kind == "stop":
        return _hint(problem["note"])
    if kind == "missing":
        return _hint(
            "The check calls a function named multi_head, and your code does not define one.",
            "No line of your code starts with def multi_head. Reset brings the starter code back.",
            "def multi_head(q, keys, values):\n" + BODY,
        )
    if kind == "script_error":
        exc = problem["exc"]
        return _hint(
            "Your code stops with an error before it reaches the function multi_head, so there is "
            "nothing to check yet.",
            diagnosis._error_line(exc) + ".",
            diagnosis._stop_note(exc),
        )
    if kind == "raised":
        return diagnosis._raised(problem["exc"], cases[problem["call"]], job.get("fn"), cases)
    if kind == "not_numbers":
        return diagnosis._shape_problem(problem["value"], cases[problem["call"]], source)
    if kind == "error_after":
        exc = problem["exc"]
        return _hint(
            "Your multi_head gives numbers, but the lines after it stop with an error.",
            diagnosis._error_line(exc) + ".",
            diagnosis._stop_note(exc),
        )
    if kind:
        return _hint(f"The check itself stopped ({problem.get('error')}); press Check again.")
    return None


def explain(job, expected):
    """The Hint for the learner's numbers against microgpt's (None when they agree)."""
    import diagnosis
    import sandbox

    diagnosis._use_reference()
    doc = job["doc"]
    source = job.get("source", "")
    diagnosis._job.clear()
    diagnosis._job.update(source=source)
    cases = [
        dict(case, q=q, keys=keys, values=values, n_head=doc["n_head"])
        for case, (q, keys, values) in zip(doc["cases"], doc["calls"])
    ]
    found = _problem_hint(job, cases, source)
    if found:
        return found
    outputs, want = job["outputs"], expected["outputs"]
    n_head, head_dim, n_embd = diagnosis._sizes(cases)
    fn = job.get("fn")
    for i, out in enumerate(outputs):
        if not _is_flat(out):
            if out == []:
                return _empty_hint(n_embd, head_dim)
            raw = _call(fn, cases[i])
            sandbox.restore()
            return diagnosis._shape_problem(raw if raw is not None else out, cases[i], source)
    wrong = [i for i, (out, right) in enumerate(zip(outputs, want)) if not diagnosis._close(out, right)]
    if not wrong and len(outputs) == len(want):
        return None
    if wrong:
        found = _summed_hint(outputs[wrong[0]], cases[wrong[0]], n_head, head_dim, source)
        if found:
            return found
    trace = diagnosis._probe(fn, cases)
    sandbox.restore()
    return diagnosis.explain(cases, outputs, trace, source, doc.get("attn_wo")) or None
