"""The exercise's diagnosis: call the learner's multi_head on every case, then explain wrong numbers.

The page's Pyodide worker (site_src/js/microgpt/exercise/worker.js) imports this
file as ``diagnosis`` beside ``sandbox.py`` (the run protocol it builds on); it is
plain Python, so the tests also run it under CPython.

This module never decides whether an answer passes. A Check has two steps:

1. ``collect(source, inputs_json)`` runs the learner's code, calls their
   ``multi_head`` on every case the page sent (the inputs only) and returns the
   raw numbers it gave: JSON ``{"outputs", "failed", "stop"}``, where
   ``outputs`` holds one list of floats per case, ``failed`` says that Python
   has something to object to, and ``stop`` is "" or what ended the code early
   (see sandbox.py). The worker passes this on to the page at once; the page
   compares the numbers with microgpt's, which it computes itself, so nothing
   that runs after this point can change the verdict.
2. ``explain_collected()`` returns the explanation of a wrong answer ('' when
   the numbers are microgpt's) as a hint in three tiers joined by ``SEP``:
   the idea in words (no code), where (the line and what is wrong in it), and
   the code, which the page shows only when the learner asks for it. Only now is microgpt's float arithmetic loaded
   (``microgpt_floats``, a copy of export/microgpt/floats.py, which the worker
   writes to REFERENCE after step 1), so the learner's code can never import it. It
   recomputes the right answer and tries the mistakes learners commonly make
   (``MISTAKES``) until one reproduces the learner's numbers.

``check(source, inputs_json)`` does both (JSON ``{"outputs", "message", "stop"}``).
"""

import json
import os
import re
import sys
import traceback

import sandbox
from sandbox import _compile, _json, _namespace, _Quiet, _shorten, _stop_note, _stop_of, learner_traceback

# microgpt's float arithmetic, loaded by explain_collected() only: see _use_reference(). The worker
# writes it to REFERENCE after the learner's code has run, in a folder that is not on sys.path; the
# tests under CPython point REFERENCE at export/microgpt/floats.py and it is loaded the same way, by path.
REFERENCE = "/opt/reference/microgpt_floats.py"
floats = None
# What collect() leaves for explain_collected(): the job's source, cases, numbers and function.
_job = {}


def _use_reference():
    """Load microgpt's float arithmetic, after the learner's code has run."""
    global floats
    if floats is None:
        import importlib.util

        if not os.path.isfile(REFERENCE):
            raise FileNotFoundError(f"the exercise's reference {REFERENCE} was not written before the diagnosis")
        spec = importlib.util.spec_from_file_location("microgpt_floats", REFERENCE)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        floats = module
        sandbox.remember(sys.modules[__name__])  # later restores keep it
        sandbox.remember(module)


def collect(source, inputs_json):
    """Step 1: run the code and call ``multi_head`` on every case; JSON {"outputs", "failed", "stop"}.

    ``inputs_json``: {"n_head", "head_dim", "attn_wo", "cases": [{"name", "pos", "q", "keys", "values"}]}.
    """
    _job.clear()
    try:
        sandbox.restore()
        doc = json.loads(inputs_json)
        cases = doc["cases"]
        for case in cases:
            case["n_head"] = doc["n_head"]
        outputs, problem, stop, fn = _collect(source, cases)
        sandbox.restore()  # explain with the interpreter as shipped, whatever the learner's code changed
        _job.update(
            source=source, cases=cases, outputs=outputs, problem=problem, stop=stop, fn=fn, wo=doc.get("attn_wo")
        )
        return _json(outputs=outputs, failed=bool(problem), stop=stop)
    except BaseException as exc:  # noqa: B036 -- e.g. the page's interrupt inside the checker
        sandbox.restore()
        _job.update(problem=f"{type(exc).__name__} while checking your code.", stop=_stop_of(exc))
        return _json(outputs=[], failed=True, stop=_stop_of(exc))


def explain_collected():
    """Step 2: what is wrong with the numbers collect() gave, or '' when they are microgpt's."""
    try:
        _use_reference()
        problem = _job.get("problem")
        if callable(problem):
            problem = problem()
            sandbox.restore()
        fn = _job.get("fn")
        if problem or _job.get("stop") or fn is None:
            return _tiers(problem)
        cases, outputs, source = _job["cases"], _job["outputs"], _job["source"]
        if _all_right(cases, outputs):
            return ""
        trace = _probe(fn, cases)
        sandbox.restore()
        return _tiers(explain(cases, outputs, trace, source, _job.get("wo")))
    except BaseException as exc:  # noqa: B036 -- e.g. the page's interrupt while explaining
        sandbox.restore()
        return f"{type(exc).__name__} while explaining your result."


def _tiers(problem):
    """The text the page gets: the Hint's three tiers joined by SEP ('' when nothing is wrong)."""
    found = _hint(problem)
    return found.text() if found else ""


def check(source, inputs_json):
    """Both steps in one call: JSON {"outputs", "message", "stop"}."""
    collected = json.loads(collect(source, inputs_json))
    return _json(outputs=collected["outputs"], message=explain_collected(), stop=collected["stop"])


def _collect(source, cases):
    """(outputs, problem, stop, multi_head) after running the source and calling multi_head per case."""
    try:
        code = _compile(source)
    except SyntaxError as exc:
        return [], _syntax_hint(exc), "", None
    ns = _namespace()
    script_error = None
    quiet = _Quiet()
    sys.stdout = sys.stderr = quiet
    try:
        exec(code, ns)
    except BaseException as exc:  # noqa: B036 -- the learner may raise anything
        if _stop_of(exc) in ("interrupt", "memory"):
            return [], _stop_note(exc), _stop_of(exc), None
        script_error = exc
    finally:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    fn = ns.get("multi_head")
    if not callable(fn):
        if script_error is not None:
            return (
                [],
                Hint(
                    "Your code stops with an error before it reaches the function multi_head, so there "
                    "is nothing to check yet.",
                    _error_line(script_error) + ".",
                    _stop_note(script_error),
                ),
                "",
                None,
            )
        return (
            [],
            Hint(
                "The check calls a function named multi_head, and your code does not define one.",
                "No line of your code starts with def multi_head. Reset brings the starter code back.",
                "def multi_head(q, keys, values):\n    out = []\n    ...\n    return out",
            ),
            "",
            None,
        )
    outputs = []
    for case in cases:
        sys.stdout = sys.stderr = quiet
        try:
            out = fn(list(case["q"]), [list(k) for k in case["keys"]], [list(v) for v in case["values"]])
            numbers = _numbers(out)
        except BaseException as exc:  # noqa: B036
            stop = _stop_of(exc)
            if stop in ("interrupt", "memory"):
                return outputs, _stop_note(exc), stop, None
            return outputs, lambda exc=exc, case=case: _raised(exc, case, fn, cases), "", fn
        finally:
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        if numbers is None:
            return outputs, lambda out=out, case=case: _shape_problem(out, case, source), "", fn
        outputs.append(numbers)
    if script_error is not None:
        return (
            outputs,
            Hint(
                "Your multi_head gives numbers, but the lines after it stop with an error.",
                _error_line(script_error) + ".",
                _stop_note(script_error),
            ),
            "",
            fn,
        )
    return outputs, "", "", fn


def _numbers(out):
    """``out`` as a list of plain floats, or None when it is not a flat list of numbers."""
    if type(out) is not list or not out:
        return None
    numbers = []
    for v in out:
        if type(v) is bool or not isinstance(v, (int, float)):
            return None
        numbers.append(float(v))
    return numbers


# ---------------------------------------------------------------------------
# Hints in three tiers.
# ---------------------------------------------------------------------------
# Every diagnosis is a Hint: first the idea in words (no code), then where (the
# line and what is wrong in it), then code, which the page shows only when the
# learner presses "Show me the code". The page gets the three joined by SEP.
SEP = "\x1e"
# The lines the exercise asks for, as the code tier shows them (the same as solution.py's).
K_CODE = "k_h = [k[start:start + HEAD_DIM] for k in keys]"
V_CODE = "v_h = [v[start:start + HEAD_DIM] for v in values]"
BLEND_CODE = "blended = [sum(weight * v[j] for weight, v in zip(w, v_h)) for j in range(HEAD_DIM)]"
EXTEND_CODE = "out.extend(blended)"
SCORES_CODE = "scores = [dot(q_h, k) / math.sqrt(HEAD_DIM) for k in k_h]"
SOFTMAX_CODE = "w = softmax(scores)"
Q_CODE = "q_h = q[start:start + HEAD_DIM]"
RETURN_CODE = (
    "    out = []\n    for h in range(N_HEAD):\n        ...\n    return out   # lined up with out = [], after the loop"
)


class Hint(tuple):
    """(idea, where, code): what the learner sees first, on "Where?", and on "Show me the code"."""

    def __new__(cls, idea, where="", code=""):
        return super().__new__(cls, (str(idea), str(where), str(code)))

    idea = property(lambda self: self[0])
    where = property(lambda self: self[1])
    code = property(lambda self: self[2])

    def text(self):
        return SEP.join(self)


def _hint(problem):
    """A Hint from whatever a step left: a Hint, a plain sentence, or nothing."""
    if isinstance(problem, Hint):
        return problem
    return Hint(problem) if problem else None


def _blank2_code():
    return f"        {BLEND_CODE}\n        {EXTEND_CODE}"


def _extend_code(source):
    """The learner's own ``out.append(X)`` as ``out.extend(X)``; else the whole blank, which defines its names."""
    found = re.search(r"^(\s*)out\s*\.\s*append\((.+)\)\s*(#.*)?$", source or "", re.M)
    if found and found.group(2).strip():
        return f"{found.group(1)}out.extend({found.group(2).strip()})"
    return _blank2_code()


# ---------------------------------------------------------------------------
# Explaining a wrong answer.
# ---------------------------------------------------------------------------
def where(case):
    pos = case["pos"]
    what = f"letter {case['name'][pos - 1]!r}" if pos else "the start marker"
    keys = "1 key" if pos == 0 else f"{pos + 1} keys"
    return f'"{case["name"]}" at position {pos}, {what}, with {keys}'


def _sizes(cases):
    n_embd = len(cases[0]["q"])
    n_head = cases[0].get("n_head", 4)
    return n_head, n_embd // n_head, n_embd


def _all_right(cases, outputs):
    if len(outputs) != len(cases):
        return False
    n_head = _sizes(cases)[0]
    return all(
        _close(out, floats.multi_head(c["q"], c["keys"], c["values"], n_head)[0]) for c, out in zip(cases, outputs)
    )


def _error_line(exc):
    """'Line N: ErrorType: message' for the learner's frame of ``exc``."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == sandbox.FILENAME]
    at = f"Line {frames[-1].lineno}" if frames else "Your code"
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()[-1]
    return f"{at} stops with {_shorten(text)}"


def _syntax_hint(exc):
    return Hint(
        "Python cannot read your code: something in it is not valid Python, such as a bracket left "
        "open, a missing colon or a line indented more or less than the lines around it.",
        f"Line {exc.lineno}: {exc.msg}." if exc.lineno else f"{exc.msg}.",
        learner_traceback(exc),
    )


def _raised(exc, case, fn, cases):
    trace = _probe(fn, [case])
    hint = _list_slice_hint(trace, [case], case) or _slice_hint(trace, cases)
    if hint:
        return Hint(
            hint.idea,
            f"{hint.where} (It stopped with an error for {where(case)}: {_error_line(exc)}.)",
            hint.code + "\n\n" + learner_traceback(exc),
        )
    return Hint(
        f"Your multi_head stopped with an error when the check called it for {where(case)}.",
        _error_line(exc) + ".",
        _stop_note(exc) if isinstance(exc, SystemExit) else learner_traceback(exc),
    )


def _shape_problem(out, case, source=""):
    n_head, head_dim, n_embd = _sizes([case])
    if out is None:
        return Hint(
            "Your multi_head gives back nothing: a function hands its result back with a return "
            "line, here the list out, once all the heads have added their numbers.",
            "The function has no return line, or returns None. Its last line should return out, "
            "lined up with the line that creates out, not inside the loop over the heads.",
            RETURN_CODE,
        )
    if isinstance(out, tuple):
        return Hint(
            f"Your multi_head gives back {len(out)} things at once; the check wants only the list of {n_embd} numbers.",
            "The return line hands back a tuple, several values separated by commas. Return only out.",
            "    return out",
        )
    if not isinstance(out, list):
        return Hint(
            f"multi_head should give back a list of {n_embd} numbers, but it gives a {type(out).__name__}.",
            "Look at the return line at the end of multi_head: it should return out.",
            "    return out",
        )
    if not out:
        todo = []
        if re.search(r"^\s*k_h\s*=\s*keys\s*(#|$)", source, re.M):
            todo.append("Blank 1 is still open too: k_h and v_h hold whole keys and values.")
        line = _line(None, "w", source)
        return Hint(
            f"Nothing is added to out yet. Each head must work out its {head_dim} blended numbers, "
            "the weighted sum over the positions of its value slices, and add them to the end of out.",
            f"Blank 2, after the softmax{line}: compute the head's {head_dim} blended numbers and put "
            "them at the end of out, one number at a time. " + " ".join(todo),
            (f"        {K_CODE}\n        {V_CODE}\n        ...\n" if todo else "") + _blank2_code(),
        )
    if any(isinstance(v, (list, tuple)) for v in out):
        flat = []
        for v in out:
            flat.extend(v if isinstance(v, (list, tuple)) else [v])
        sizes = ", ".join(str(len(v)) if isinstance(v, (list, tuple)) else "1" for v in out)
        right = ""
        if len(flat) == n_embd and all(_is_number(v) for v in flat):
            want, _ = floats.multi_head(case["q"], case["keys"], case["values"], n_head)
            if _close(flat, want):
                right = " The numbers inside them are right; only the way they are added is wrong."
        line = _line(None, "out", source, r"\bout\s*\.\s*append\(|\bout\s*\+=")
        return Hint(
            f"out holds lists instead of numbers: each head put its {head_dim} numbers in as one item, "
            f"a list, so {n_head} heads give {len(out)} items instead of {n_embd} numbers.",
            f"out has {len(out)} items of sizes {sizes}. The line that adds to out{line} uses append, "
            "which adds its argument as one item; extend adds a list's items one by one." + right,
            _extend_code(source),
        )
    bad = next(i for i, v in enumerate(out) if not _is_number(v))
    return Hint(
        f"out should hold only numbers, but one of its items is a {type(out[bad]).__name__}.",
        f"Item {bad} of out is {_shorten(repr(out[bad]))}: look at what the line that adds to out is given.",
        _blank2_code(),
    )


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _close(got, want, tolerance=1e-9):
    return len(got) == len(want) and all(abs(g - w) <= tolerance * max(1.0, abs(w)) for g, w in zip(got, want))


def _probe(fn, cases):
    """Call multi_head once more, on the longest case, recording its variables per head.

    Returns {"heads": {h: {name: value}}, "lines": {name: line where it last changed}}.
    """
    if fn is None or not cases or not hasattr(fn, "__code__"):
        return None
    case = max(cases, key=lambda c: len(c["keys"]))
    code = fn.__code__
    heads, lines, last = {}, {}, {}

    def record(frame):
        values = dict(frame.f_locals)
        h = values.get("h")
        if type(h) is int:
            heads.setdefault(h, {}).update(values)
        for name, value in values.items():
            if last.get(name, (None,))[0] is not value:
                lines[name] = last_line[0]
                last[name] = (value,)

    last_line = [code.co_firstlineno]

    def tracer(frame, event, arg):
        if frame.f_code is not code:
            return None
        if event in ("line", "return"):
            record(frame)
            last_line[0] = frame.f_lineno
        return tracer

    quiet = _Quiet()
    sys.stdout = sys.stderr = quiet
    sys.settrace(tracer)
    try:
        fn(list(case["q"]), [list(k) for k in case["keys"]], [list(v) for v in case["values"]])
    except Exception:  # noqa: BLE001 -- the error itself is reported elsewhere
        pass
    finally:
        sys.settrace(None)
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    body = [line for _, _, line in code.co_lines() if line]
    return {"heads": heads, "lines": lines, "last": max(body) if body else code.co_firstlineno}


def _line(trace, name, source, pattern=None):
    """The learner's line number where ``name`` is computed, as ' (line N)', or ''."""
    number = (trace or {}).get("lines", {}).get(name)
    if not number and source:
        regex = re.compile(pattern or rf"^\s*{re.escape(name)}\s*=")
        number = next((i for i, l in enumerate(source.splitlines(), 1) if regex.search(l)), None)
    return f" (line {number})" if number else ""


def _at(trace, name, source, pattern=None):
    """'Line N' where ``name`` is computed, or 'The line that computes name'."""
    found = re.search(r"\d+", _line(trace, name, source, pattern))
    return f"Line {found.group()}" if found else f"The line that computes {name}"


SLICE_KINDS = (("k_h", "key", K_CODE), ("v_h", "value", V_CODE))


def _slice_hint(trace, cases, source=""):
    """A Hint when some head's k_h or v_h rows do not hold HEAD_DIM numbers each."""
    if not trace:
        return None
    _, head_dim, n_embd = _sizes(cases)
    for h in sorted(trace["heads"]):
        seen = trace["heads"][h]
        for name, what, code in SLICE_KINDS:
            rows = seen.get(name)
            if isinstance(rows, list) and rows and all(isinstance(r, list) for r in rows):
                size = len(rows[0])
                if size != head_dim and size != n_embd:
                    return Hint(
                        f"Every head must take its own {head_dim} numbers of each {what}, but from head 2 "
                        f"on each {what}'s slice holds {size} numbers.",
                        f"{_at(trace, name, source)}: in head {h + 1} (h = {h}) every {what} in {name} has "
                        f"{size} numbers. The slice stops at number {head_dim} whatever start is, so from "
                        f"head 2 on it is too short or empty; it must end {head_dim} numbers after start.",
                        f"        {code}",
                    )
    return None


def _list_slice_hint(trace, cases, case=None):
    """A Hint when k_h or v_h slices the list of positions (keys[start:...]) instead of each vector."""
    if not trace:
        return None
    case = case or max(cases, key=lambda c: len(c["keys"]))
    _, head_dim, n_embd = _sizes(cases)
    for name, what, code in SLICE_KINDS:
        full = case["keys" if what == "key" else "values"]
        for h in sorted(trace["heads"]):
            rows = trace["heads"][h].get(name)
            start = h * head_dim
            if isinstance(rows, list) and len(rows) != len(full) and rows == full[start : start + head_dim]:
                return Hint(
                    f"Each head needs every position's {what}, cut down to the head's own {head_dim} "
                    f"numbers. Yours cuts the list of {what}s instead: head h keeps some positions, "
                    f"whole, and drops the others.",
                    f"{_at(trace, name, source=_job.get('source', ''))}: the slice is applied to the list "
                    f"of {what}s, one item per position, so in head {h + 1} {name} holds {len(rows)} of "
                    f"the {len(full)} {what}s. Slice each {what} instead, and keep one slice per position.",
                    f"        {code}",
                )
    return None


def _offset_forgotten_hint(trace, cases, source):
    """A Hint when k_h (or v_h) holds the first HEAD_DIM numbers of every vector in every head."""
    if not trace or len(trace["heads"]) < 2:
        return None
    case = max(cases, key=lambda c: len(c["keys"]))
    _, head_dim, _ = _sizes(cases)
    for name, what, code in SLICE_KINDS:
        full = case["keys" if what == "key" else "values"]
        first = [vec[:head_dim] for vec in full]
        rows = [trace["heads"][h].get(name) for h in sorted(trace["heads"])]
        if all(r == first for r in rows) and first != [vec[head_dim : 2 * head_dim] for vec in full]:
            return Hint(
                f"Each head must take its own {head_dim} numbers of every {what}: head 1 numbers 0 to "
                f"{head_dim - 1}, head 2 the next {head_dim}, and so on. In yours every head takes the "
                f"first {head_dim}, which belong to head 1.",
                f"{_at(trace, name, source)}: the slice of each {what} starts at number 0 in every head; "
                "it must start where this head's numbers start, at start.",
                f"        {code}",
            )
    return None


WEIGHTS_LINE = r"out\s*\.\s*(extend|append)\(\s*w\s*\)|out\s*\+=\s*w\b"


def _weights_hint(got, case, n_head, head_dim, trace, source):
    """A Hint when out holds each head's attention weights instead of its blended numbers."""
    weights = []
    for h in range(n_head):
        weights.extend(floats.head_weights(case["q"], case["keys"], h * head_dim, head_dim))
    traced = []
    for h in sorted((trace or {}).get("heads", {})):
        w = trace["heads"][h].get("w")
        traced.extend(w if isinstance(w, list) else [])
    if not (_close(got, weights) or (traced and _close(got, traced))):
        return None
    return Hint(
        f"out gets each head's attention weights, one per position, instead of the head's {head_dim} "
        "blended numbers. The weights only say how much each position counts; the blend multiplies "
        "them with the value slices and adds up over the positions.",
        f"{_at(None, 'out', source, WEIGHTS_LINE)}: w is added "
        f"to out. Build the head's {head_dim} blended numbers first, number j being the sum over the "
        "positions of weight times number j of that position's value slice, and add those.",
        _blank2_code(),
    )


# The mistakes learners make, each as the numbers it would give.
def _heads(q, keys, values, n_head, scores_of=None, weights_of=None, key_at=None, value_at=None, query_at=None):
    head_dim = len(q) // n_head
    out = []
    for h in range(n_head):
        start = h * head_dim
        qs = query_at(h, head_dim) if query_at else start
        q_h = q[qs : qs + head_dim]
        ks = key_at(h, head_dim) if key_at else start
        k_h = [k[ks : ks + head_dim] for k in keys]
        vs = value_at(h, head_dim) if value_at else start
        v_h = [v[vs : vs + head_dim] for v in values]
        raw = [floats.total(a * b for a, b in zip(q_h, k)) for k in k_h]
        scores = scores_of(raw, head_dim, len(q)) if scores_of else [s * (head_dim**0.5) ** -1 for s in raw]
        w = weights_of(scores, q_h) if weights_of else floats.softmax(scores)
        out.extend(floats.total(wt * v[j] for wt, v in zip(w, v_h)) for j in range(head_dim))
    return out


def _right(q, keys, values, n_head, wo):
    return floats.multi_head(q, keys, values, n_head)[0]


def _reversed_heads(q, keys, values, n_head, wo):
    out = _right(q, keys, values, n_head, wo)
    d = len(q) // n_head
    return [x for h in reversed(range(n_head)) for x in out[h * d : (h + 1) * d]]


# Same numbers as scale_head_dim when N_EMBD is HEAD_DIM squared: told apart by the line's text.
SQRT_N_EMBD = (
    "The scores are divided by the square root of the size of a whole vector, {n_embd}. Each head "
    "compares only its own {head_dim} numbers, so divide by the square root of {head_dim}, that is by "
    "{sqrt_head_dim:g}.",
    "{at}: the scores are divided by the square root of N_EMBD; use the square root of HEAD_DIM.",
    "        " + SCORES_CODE,
)


def _text_of(line, source):
    """The source text of the line named in ' (line N)'."""
    found = re.search(r"\d+", line or "")
    lines = source.splitlines()
    return lines[int(found.group()) - 1] if found and int(found.group()) <= len(lines) else ""


# Where to send the learner for a mistake whose line the variable trace cannot tell.
LINE_PATTERNS = {
    "attn_wo_inside": r"attn_wo",
    "reversed_heads": r"for h in .*(reversed|-\s*1)|\bout\s*=\s*\w+\s*\+|out\.insert|out\[:0\]",
}

# name, the numbers it gives, its Hint (idea, where, code; {at} is "Line N"), the variable it is computed in.
MISTAKES = [
    (
        "no_scale",
        lambda q, k, v, n, wo: _heads(q, k, v, n, scores_of=lambda s, d, e: s),
        (
            "The scores must be scaled down before the softmax: divided by the square root of the head's size, "
            "{head_dim} numbers, so by {sqrt_head_dim:g}. Without it the softmax favours one position far too much.",
            "{at}: the scores are the dot products alone; divide each by the square root of HEAD_DIM.",
            "        " + SCORES_CODE,
        ),
        "scores",
    ),
    (
        "scale_head_dim",
        lambda q, k, v, n, wo: _heads(q, k, v, n, scores_of=lambda s, d, e: [x / d for x in s]),
        (
            "The scores are divided by the head's size, {head_dim}, but attention divides by its square root, "
            "{sqrt_head_dim:g}.",
            "{at}: the scores are divided by HEAD_DIM; divide by the square root of HEAD_DIM instead.",
            "        " + SCORES_CODE,
        ),
        "scores",
    ),
    (
        "scale_n_embd",
        lambda q, k, v, n, wo: _heads(q, k, v, n, scores_of=lambda s, d, e: [x / e for x in s]),
        (
            "The scores are divided by the size of a whole vector, {n_embd}. Each head compares only its own "
            "{head_dim} numbers, so divide by the square root of the head's size, {sqrt_head_dim:g}.",
            "{at}: the scores are divided by N_EMBD; divide by the square root of HEAD_DIM.",
            "        " + SCORES_CODE,
        ),
        "scores",
    ),
    (
        "no_softmax",
        lambda q, k, v, n, wo: _heads(q, k, v, n, weights_of=lambda s, qh: s),
        (
            "The scores are used as weights directly. They must first go through the softmax, which makes them "
            "positive and makes them add up to 1.",
            "{at}: w is the scores themselves; w must be the softmax of the scores.",
            "        " + SOFTMAX_CODE,
        ),
        "w",
    ),
    (
        "softmax_query",
        lambda q, k, v, n, wo: _heads(q, k, v, n, weights_of=lambda s, qh: floats.softmax(qh)),
        (
            "The weights say how much each position counts, so there is one per position and they come from the "
            "scores. Yours come from the query slice, one per number of the query.",
            "{at}: the softmax is taken of the query slice q_h, not of the scores.",
            "        " + SOFTMAX_CODE,
        ),
        "w",
    ),
    (
        "query_unsliced",
        lambda q, k, v, n, wo: _heads(q, k, v, n, query_at=lambda h, d: 0),
        (
            "Every head uses the first {head_dim} numbers of the query; each head must use its own {head_dim}.",
            "{at}: the query is not sliced, so the scores compare its first {head_dim} numbers in every head. "
            "Keep this head's {head_dim} numbers of q, from start on.",
            "        " + Q_CODE,
        ),
        "q_h",
    ),
    (
        "reversed_heads",
        _reversed_heads,
        (
            "Each head's numbers are right, but the heads come out in reverse order: out must start with head 1's "
            "numbers and end with head {n_head}'s.",
            "{at}: go through the heads from the first to the last, h from 0 to {last_head}, and add each head's "
            "numbers at the end of out.",
            "    for h in range(N_HEAD):\n        ...\n" + _blank2_code(),
        ),
        "out",
    ),
    (
        "attn_wo_inside",
        lambda q, k, v, n, wo: floats.linear(_right(q, k, v, n, wo), wo),
        (
            "Your numbers are microgpt's after attn_wo. multi_head must hand back the heads glued side by side; "
            "the lines after it apply attn_wo, once.",
            "{at}: attn_wo is applied inside multi_head. Return the glued heads as they are.",
            "    return out",
        ),
        "out",
    ),
    (
        "key_slice_end",
        lambda q, k, v, n, wo: _heads(q, k, v, n, key_at=lambda h, d: 0 if h == 0 else len(q)),
        (
            "From head 2 on, the keys' slices are empty, so every position gets the same weight.",
            "{at}: the slice of each key stops at number {head_dim} whatever start is; end it {head_dim} numbers "
            "after start.",
            "        " + K_CODE,
        ),
        "k_h",
    ),
]


def _format(tiers, **facts):
    return Hint(*(t.format(**facts) for t in tiers))


def explain(cases, outputs, trace=None, source="", wo=None):
    """A Hint naming what is wrong with ``outputs``, or '' when they are microgpt's."""
    n_head, head_dim, n_embd = _sizes(cases)
    want = [floats.multi_head(c["q"], c["keys"], c["values"], n_head)[0] for c in cases]
    wrong = [i for i, (out, right) in enumerate(zip(outputs, want)) if not _close(out, right)]
    if not wrong and len(outputs) == len(cases):
        return ""
    if not wrong:
        case = cases[len(outputs)]
        return Hint(
            f"multi_head gave no numbers for {where(case)}.",
            "It returned for the earlier positions but not for this one.",
            "",
        )
    first = cases[wrong[0]]
    got = outputs[wrong[0]]
    found = _list_slice_hint(trace, cases)
    if found:
        return found
    if len(got) != n_embd:
        return _length_problem(got, first, n_head, head_dim, trace, source)
    found = _slice_hint(trace, cases, source) or _offset_forgotten_hint(trace, cases, source)
    if found:
        return found
    facts = {
        "head_dim": head_dim,
        "n_embd": n_embd,
        "n_head": n_head,
        "last_head": n_head - 1,
        "sqrt_head_dim": head_dim**0.5,
    }
    for name, numbers, tiers, variable in MISTAKES:
        if name == "attn_wo_inside" and wo is None:
            continue
        if not _close(got, numbers(first["q"], first["keys"], first["values"], n_head, wo)):
            continue  # the cheap test first: most mistakes differ at once
        if all(_close(out, numbers(c["q"], c["keys"], c["values"], n_head, wo)) for c, out in zip(cases, outputs)):
            pattern = LINE_PATTERNS.get(name)
            line = _line(trace if pattern is None else None, variable, source, pattern)
            at = _at(trace if pattern is None else None, variable, source, pattern)
            if name == "scale_head_dim" and "N_EMBD" in _text_of(line, source):
                tiers = SQRT_N_EMBD
            return _format(tiers, at=at, **facts)
    return _offsets(cases, outputs, wrong, n_head, head_dim, trace, source)


def _length_problem(got, case, n_head, head_dim, trace, source):
    n_embd = n_head * head_dim
    count = f"out has {len(got)} numbers for {where(case)}; it should have {n_embd}, {n_head} heads of {head_dim}."
    found = _weights_hint(got, case, n_head, head_dim, trace, source)
    if found:
        return found
    if len(got) == head_dim:
        return Hint(
            f"out ends up with one head's numbers only: multi_head hands back its result before the other "
            f"{n_head - 1} heads have run.",
            f"{count} The return line is indented inside the loop over the heads; move it out, lined up "
            "with the line that creates out.",
            RETURN_CODE,
        )
    if len(got) == n_head * n_embd:
        return Hint(
            f"Each head blends all {n_embd} numbers of every value instead of its own {head_dim}.",
            f"{count} {_at(trace, 'v_h', source)}: v_h keeps whole values; keep only this head's "
            f"{head_dim} numbers of each value.",
            f"        {V_CODE}",
        )
    found = _slice_hint(trace, [case], source)
    if found:
        return Hint(found.idea, f"{count} {found.where}", found.code)
    if len(got) > n_embd:
        return Hint(
            f"out has more numbers than the {n_embd} it should: some heads add more than their {head_dim}.",
            f"{count} Are some numbers added more than once, or not cut down to HEAD_DIM?",
            _blank2_code(),
        )
    return Hint(
        f"out has fewer numbers than the {n_embd} it should: every head must add its {head_dim}.", count, _blank2_code()
    )


def _offsets(cases, outputs, wrong, n_head, head_dim, trace, source):
    """Explain wrong numbers by the key and value offsets that reproduce each head."""
    n_embd = n_head * head_dim
    offsets = range(n_embd - head_dim + 1)
    order = sorted(range(len(outputs)), key=lambda i: (i not in wrong, -cases[i]["pos"]))
    fits = []
    for h in range(n_head):
        possible = {(k, v) for k in offsets for v in offsets}
        for i in order:
            case, chunk = cases[i], outputs[i][h * head_dim : (h + 1) * head_dim]
            weights, kept = {}, set()
            for k_at, v_at in possible:
                if k_at not in weights:
                    weights[k_at] = floats.head_weights(case["q"], case["keys"], h * head_dim, head_dim, k_at)
                if _close(chunk, floats.blend(weights[k_at], case["values"], v_at, head_dim)):
                    kept.add((k_at, v_at))
            possible = kept
            if not possible:
                break
        fits.append(possible)

    def span(at):
        return f"numbers {at}-{at + head_dim - 1}"

    hints = []
    explained = [h for h in range(n_head) if fits[h]]
    unexplained = [h for h in range(n_head) if not fits[h]]
    for what, side, code, variable in (("key", 0, K_CODE, "k_h"), ("value", 1, V_CODE, "v_h")):
        seen = {h: sorted({pair[side] for pair in fits[h]}) for h in explained}
        off = {h: at for h, at in seen.items() if h * head_dim not in at}
        if not off:
            continue
        at = _at(trace, variable, source)
        if all(0 in seen[h] for h in explained) and len(explained) == n_head:
            line = _sliced_but_unused(trace, variable, head_dim, source)
            if line is not None:
                hints.append(
                    Hint(
                        f"The computation reads the whole {what}s instead of this head's slices, so every head "
                        f"works with head 1's numbers, the first {head_dim} of each {what}.",
                        f"{variable} holds this head's {head_dim} numbers of every {what}, but{line} reads "
                        f"`{what}s`, whose first {head_dim} numbers belong to head 1. Use {variable} there instead.",
                        f"        {BLEND_CODE}" if what == "value" else f"        {SCORES_CODE}",
                    )
                )
            else:
                hints.append(
                    Hint(
                        f"Each head must see only its own {head_dim} numbers of every {what}. In yours every head "
                        f"reads numbers 0 to {head_dim - 1} of each {what}, head 1's.",
                        f"The {what}s are not sliced. {at}: {variable} holds the whole {what}s; it must hold one "
                        f"slice per {what}, this head's {head_dim} numbers from start on.",
                        f"        {code}",
                    )
                )
        else:
            lines = [
                f"head {h + 1} (h = {h}) used {what} {span(at_[0])} instead of {span(h * head_dim)}"
                for h, at_ in sorted(off.items())
            ]
            hints.append(
                Hint(
                    f"Each head's slice of the {what}s starts at the wrong number: head h's own {head_dim} numbers "
                    f"start at h times {head_dim}.",
                    f"The {what}s are sliced at the wrong offset. {at}: " + "; ".join(lines) + ".",
                    f"        {code}",
                )
            )
    if unexplained:
        i = wrong[0]
        case, h = cases[i], unexplained[0]
        got = outputs[i][h * head_dim : (h + 1) * head_dim]
        want = floats.multi_head(case["q"], case["keys"], case["values"], n_head)[0][h * head_dim : (h + 1) * head_dim]
        heads = ", ".join(str(x + 1) for x in unexplained)
        plural = "s" if len(unexplained) > 1 else ""
        hints.append(
            Hint(
                f"The numbers of head{plural} {heads} are not microgpt's, and none of the usual mistakes gives them. "
                "Go through the three steps of one head: the scores, the softmax, the blend.",
                f"For {where(case)}, head {h + 1} gave [{', '.join(f'{v:.4f}' for v in got)}] but should give "
                f"[{', '.join(f'{v:.4f}' for v in want)}]. Check the scores (the query slice dotted with each key "
                "slice, divided by the square root of HEAD_DIM), the softmax, and the blend (number j adds up "
                "weight times number j of each value slice over all positions).",
                f"        {SCORES_CODE}\n        {SOFTMAX_CODE}\n{_blank2_code()}",
            )
        )
    if not hints:
        return Hint(f"Your numbers differ from microgpt's for {where(cases[wrong[0]])}.", "", "")
    return Hint(
        " ".join(x.idea for x in hints), " ".join(x.where for x in hints), "\n".join(x.code for x in hints if x.code)
    )


def _sliced_but_unused(trace, variable, head_dim, source):
    """' (line N)' (or '') when ``variable`` is sliced right but a later line reads the unsliced list; else None."""
    if not trace or not trace["heads"]:
        return None
    rows = [seen.get(variable) for seen in trace["heads"].values()]
    if not all(isinstance(r, list) and r and all(isinstance(x, list) and len(x) == head_dim for x in r) for r in rows):
        return None
    if len(rows) > 1 and all(r == rows[0] for r in rows):
        return None  # the same slice in every head: the offset is forgotten, not the variable
    unsliced = re.compile(r"\b{}\b".format("keys" if variable == "k_h" else "values"))
    own = re.compile(rf"^\s*{variable}\s*=|^\s*def |^\s*keys\s*,|\.append\(matvec")
    for number, text in enumerate(source.splitlines(), 1):
        code = text.split("#", 1)[0]
        if unsliced.search(code) and not own.search(code) and trace["lines"].get(variable, 0) < number <= trace["last"]:
            return f" (line {number})"
    return ""
