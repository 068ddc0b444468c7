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
   the numbers are microgpt's). Only now is microgpt's float arithmetic loaded
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

import sandbox
from sandbox import _compile, _json, _namespace, _Quiet, _shorten, _stop_note, _stop_of, learner_traceback

# microgpt's float arithmetic, loaded by explain_collected() only: see _use_reference(). The worker
# writes it to REFERENCE after the learner's code has run, in a folder that is not on sys.path.
REFERENCE = "/opt/reference/microgpt_floats.py"
floats = None
# What collect() leaves for explain_collected(): the job's source, cases, numbers and function.
_job = {}


def _use_reference():
    """Load microgpt's float arithmetic, after the learner's code has run."""
    global floats
    if floats is None:
        if os.path.isfile(REFERENCE):
            import importlib.util

            spec = importlib.util.spec_from_file_location("microgpt_floats", REFERENCE)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:  # under CPython the tests take it from the repository
            from export.microgpt import floats as module
        floats = module
        sandbox.remember(sys.modules[__name__])   # later restores keep it
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
        sandbox.restore()   # explain with the interpreter as shipped, whatever the learner's code changed
        _job.update(source=source, cases=cases, outputs=outputs, problem=problem, stop=stop, fn=fn,
                    wo=doc.get("attn_wo"))
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
            return problem or ""
        cases, outputs, source = _job["cases"], _job["outputs"], _job["source"]
        if _all_right(cases, outputs):
            return ""
        trace = _probe(fn, cases)
        sandbox.restore()
        return explain(cases, outputs, trace, source, _job.get("wo"))
    except BaseException as exc:  # noqa: B036 -- e.g. the page's interrupt while explaining
        sandbox.restore()
        return f"{type(exc).__name__} while explaining your result."


def check(source, inputs_json):
    """Both steps in one call: JSON {"outputs", "message", "stop"}."""
    collected = json.loads(collect(source, inputs_json))
    return _json(outputs=collected["outputs"], message=explain_collected(), stop=collected["stop"])


def _collect(source, cases):
    """(outputs, problem, stop, multi_head) after running the source and calling multi_head per case."""
    try:
        code = _compile(source)
    except SyntaxError as exc:
        return [], "Python cannot read your code (a syntax error):\n\n" + learner_traceback(exc), "", None
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
            return [], ("Your code stopped before multi_head was defined:\n\n"
                        + _stop_note(script_error)), "", None
        return [], ("There is no function called multi_head in your code. "
                    "Press Reset to get the starter code back."), "", None
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
            return outputs, lambda: _shape_problem(out, case), "", fn
        outputs.append(numbers)
    if script_error is not None:
        return outputs, ("multi_head gives numbers, but the lines after it stop with an error:\n\n"
                         + _stop_note(script_error)), "", fn
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
# Explaining a wrong answer.
# ---------------------------------------------------------------------------
def where(case):
    pos = case["pos"]
    what = f"letter {case['name'][pos - 1]!r}" if pos else "the start marker"
    keys = "1 key" if pos == 0 else f"{pos + 1} keys"
    return f'"{case["name"]}" at position {pos} ({what}; {keys})'


def _sizes(cases):
    n_embd = len(cases[0]["q"])
    n_head = cases[0].get("n_head", 4)
    return n_head, n_embd // n_head, n_embd


def _all_right(cases, outputs):
    if len(outputs) != len(cases):
        return False
    n_head = _sizes(cases)[0]
    return all(_close(out, floats.multi_head(c["q"], c["keys"], c["values"], n_head)[0])
               for c, out in zip(cases, outputs))


def _raised(exc, case, fn, cases):
    message = (f"multi_head stopped with an error when it was called for {where(case)}:\n\n"
               + (_stop_note(exc) if isinstance(exc, SystemExit) else learner_traceback(exc)))
    trace = _probe(fn, [case])
    hint = _slice_hint(trace, cases)
    return message + ("\n\n" + hint if hint else "")


def _shape_problem(out, case):
    n_head, head_dim, n_embd = _sizes([case])
    if out is None:
        return ("multi_head returned None. Its last line should be `return out`, "
                "lined up with `out = []` (not inside the for loop).")
    if isinstance(out, tuple):
        return (f"multi_head returned a tuple of {len(out)} things (`return out, ...`?). "
                "Return only the list: `return out`.")
    if not isinstance(out, list):
        return f"multi_head should return the list out, but it returned a {type(out).__name__}."
    if not out:
        return ("out is empty: nothing was added to it. The second blank should add each head's "
                f"{head_dim} blended numbers to the end of out with out.extend(blended).")
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
        return (f"out holds lists instead of numbers: it has {len(out)} items of sizes {sizes}. "
                f"out.append(blended) adds the whole list as ONE item; use out.extend(blended), "
                f"which adds its {head_dim} numbers one by one, so {n_head} heads give {n_embd} numbers."
                + right)
    bad = next(i for i, v in enumerate(out) if not _is_number(v))
    return (f"out should hold only numbers, but item {bad} is {_shorten(repr(out[bad]))} "
            f"(a {type(out[bad]).__name__}).")


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


def _slice_hint(trace, cases):
    """A message when some head's q_h, k_h or v_h do not hold HEAD_DIM numbers each."""
    if not trace:
        return ""
    _, head_dim, n_embd = _sizes(cases)
    for h in sorted(trace["heads"]):
        seen = trace["heads"][h]
        for name, what in (("k_h", "key"), ("v_h", "value")):
            rows = seen.get(name)
            if isinstance(rows, list) and rows and all(isinstance(r, list) for r in rows):
                size = len(rows[0])
                if size != head_dim and size != n_embd:
                    return (f"In head {h + 1} (h = {h}) every {what} in {name} has {size} numbers instead of "
                            f"HEAD_DIM = {head_dim}{_line(trace, name, '')}. A slice like "
                            f"[start:HEAD_DIM] stops at number {head_dim} whatever start is, so from head 2 on it "
                            f"is too short or empty; end the slice at start + HEAD_DIM.")
    return ""


# The mistakes learners make, each as the numbers it would give.
def _heads(q, keys, values, n_head, scores_of=None, weights_of=None, key_at=None, value_at=None, query_at=None):
    head_dim = len(q) // n_head
    out = []
    for h in range(n_head):
        start = h * head_dim
        qs = (query_at(h, head_dim) if query_at else start)
        q_h = q[qs:qs + head_dim]
        ks = key_at(h, head_dim) if key_at else start
        k_h = [k[ks:ks + head_dim] for k in keys]
        vs = value_at(h, head_dim) if value_at else start
        v_h = [v[vs:vs + head_dim] for v in values]
        raw = [floats.total(a * b for a, b in zip(q_h, k)) for k in k_h]
        scores = scores_of(raw, head_dim, len(q)) if scores_of else [s * (head_dim ** 0.5) ** -1 for s in raw]
        w = weights_of(scores, q_h) if weights_of else floats.softmax(scores)
        out.extend(floats.total(wt * v[j] for wt, v in zip(w, v_h)) for j in range(head_dim))
    return out


def _right(q, keys, values, n_head, wo):
    return floats.multi_head(q, keys, values, n_head)[0]


def _reversed_heads(q, keys, values, n_head, wo):
    out = _right(q, keys, values, n_head, wo)
    d = len(q) // n_head
    return [x for h in reversed(range(n_head)) for x in out[h * d:(h + 1) * d]]


SQRT_N_EMBD = ("The scores are divided by the square root of N_EMBD ({n_embd}), the size of a whole vector. "
               "Each head compares only its own {head_dim} numbers: divide by math.sqrt(HEAD_DIM){line}.")


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

MISTAKES = [
    ("no_scale", lambda q, k, v, n, wo: _heads(q, k, v, n, scores_of=lambda s, d, e: s),
     "The scores are not scaled: each dot product must be divided by the square root of the head's size, "
     "math.sqrt(HEAD_DIM), before the softmax{line}.", "scores"),
    ("scale_head_dim", lambda q, k, v, n, wo: _heads(q, k, v, n, scores_of=lambda s, d, e: [x / d for x in s]),
     "The scores are divided by HEAD_DIM ({head_dim}), but attention divides by its square root: "
     "/ math.sqrt(HEAD_DIM), that is / {sqrt_head_dim:g}{line}.", "scores"),
    ("scale_n_embd", lambda q, k, v, n, wo: _heads(q, k, v, n, scores_of=lambda s, d, e: [x / e for x in s]),
     "The scores are divided by N_EMBD ({n_embd}). Each head compares only its own {head_dim} numbers, so "
     "divide by the square root of the head's size: / math.sqrt(HEAD_DIM){line}.", "scores"),
    ("no_softmax", lambda q, k, v, n, wo: _heads(q, k, v, n, weights_of=lambda s, qh: s),
     "The scores are used as weights without the softmax. Turn them into weights that are positive and add up "
     "to 1: w = softmax(scores){line}.", "w"),
    ("softmax_query", lambda q, k, v, n, wo: _heads(q, k, v, n, weights_of=lambda s, qh: floats.softmax(qh)),
     "The softmax is taken of the query slice q_h, not of the scores. The weights say how much each position "
     "counts, so they come from the scores: w = softmax(scores){line}.", "w"),
    ("query_unsliced", lambda q, k, v, n, wo: _heads(q, k, v, n, query_at=lambda h, d: 0),
     "The query is not sliced: every head uses the first {head_dim} numbers of q. Head h must use its own "
     "numbers: q_h = q[start:start + HEAD_DIM]{line}.", "q_h"),
    ("reversed_heads", _reversed_heads,
     "Each head's numbers are right, but the heads are in reverse order: out starts with head {n_head}'s numbers. "
     "Go through the heads with h = 0, 1, ..., {last_head} and add each head's numbers at the END of out with "
     "out.extend(blended){line}.", "out"),
    ("attn_wo_inside", lambda q, k, v, n, wo: floats.linear(_right(q, k, v, n, wo), wo),
     "Your numbers are microgpt's after attn_wo: multi_head already applies the output projection. Return the "
     "glued heads; the code after multi_head applies attn_wo once{line}.", "out"),
    ("key_slice_end", lambda q, k, v, n, wo: _heads(q, k, v, n, key_at=lambda h, d: 0 if h == 0 else len(q)),
     "From head 2 on, the keys' slices are empty, so every position gets the same weight. A slice like "
     "k[start:HEAD_DIM] stops at number {head_dim} whatever start is; end it at start + HEAD_DIM{line}.", "k_h"),
]


def explain(cases, outputs, trace=None, source="", wo=None):
    """A message naming what is wrong with ``outputs``, or '' when they are microgpt's."""
    n_head, head_dim, n_embd = _sizes(cases)
    want = [floats.multi_head(c["q"], c["keys"], c["values"], n_head)[0] for c in cases]
    wrong = [i for i, (out, right) in enumerate(zip(outputs, want)) if not _close(out, right)]
    if not wrong and len(outputs) == len(cases):
        return ""
    if not wrong:
        return f"multi_head gave no numbers for {where(cases[len(outputs)])}."
    first = cases[wrong[0]]
    got = outputs[wrong[0]]
    if len(got) != n_embd:
        return _length_problem(got, first, n_head, head_dim, trace, source)
    hint = _slice_hint(trace, cases)
    if hint:
        return hint
    facts = {"head_dim": head_dim, "n_embd": n_embd, "n_head": n_head, "last_head": n_head - 1,
             "sqrt_head_dim": head_dim ** 0.5}
    for name, numbers, message, variable in MISTAKES:
        if name == "attn_wo_inside" and wo is None:
            continue
        if not _close(got, numbers(first["q"], first["keys"], first["values"], n_head, wo)):
            continue   # the cheap test first: most mistakes differ at once
        if all(_close(out, numbers(c["q"], c["keys"], c["values"], n_head, wo)) for c, out in zip(cases, outputs)):
            pattern = LINE_PATTERNS.get(name)
            line = _line(trace if pattern is None else None, variable, source, pattern)
            if name == "scale_head_dim" and "N_EMBD" in _text_of(line, source):
                message = SQRT_N_EMBD     # the same numbers, when N_EMBD is HEAD_DIM squared
            return message.format(line=line, **facts)
    return _offsets(cases, outputs, wrong, n_head, head_dim, trace, source)


def _length_problem(got, case, n_head, head_dim, trace, source):
    n_embd = n_head * head_dim
    message = (f"out has {len(got)} numbers at {where(case)}; it should have {n_embd}: "
               f"{n_head} heads x {head_dim} numbers.")
    if len(got) == head_dim:
        return message + " That is one head's worth: is `return out` indented inside the for loop?"
    if len(got) == n_head * n_embd:
        return message + (f" Each head blended all {n_embd} numbers of every value: the values are not "
                          f"sliced{_line(trace, 'v_h', source)}. Keep only head h's numbers: "
                          "[v[start:start + HEAD_DIM] for v in values].")
    hint = _slice_hint(trace, [case])
    if hint:
        return message + " " + hint
    if len(got) > n_embd:
        return message + " Are some heads' numbers added more than once, or not sliced to HEAD_DIM?"
    return message


def _offsets(cases, outputs, wrong, n_head, head_dim, trace, source):
    """Explain wrong numbers by the key and value offsets that reproduce each head."""
    n_embd = n_head * head_dim
    offsets = range(n_embd - head_dim + 1)
    order = sorted(range(len(outputs)), key=lambda i: (i not in wrong, -cases[i]["pos"]))
    fits = []
    for h in range(n_head):
        possible = {(k, v) for k in offsets for v in offsets}
        for i in order:
            case, chunk = cases[i], outputs[i][h * head_dim:(h + 1) * head_dim]
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
        return f"numbers {at}-{at + head_dim - 1} ([{at}:{at + head_dim}])"

    parts = []
    explained = [h for h in range(n_head) if fits[h]]
    unexplained = [h for h in range(n_head) if not fits[h]]
    for what, side, fix, variable in (("key", 0, "[k[start:start + HEAD_DIM] for k in keys]", "k_h"),
                                      ("value", 1, "[v[start:start + HEAD_DIM] for v in values]", "v_h")):
        seen = {h: sorted({pair[side] for pair in fits[h]}) for h in explained}
        off = {h: at for h, at in seen.items() if h * head_dim not in at}
        if not off:
            continue
        if all(0 in seen[h] for h in explained) and len(explained) == n_head:
            line = _sliced_but_unused(trace, variable, head_dim, source)
            if line is not None:
                parts.append(f"{variable} holds this head's {head_dim} numbers of every {what}, but the "
                             f"computation does not use it: it reads `{what}s`, whose first {head_dim} numbers "
                             f"belong to head 1{line}. Use {variable} there instead.")
            else:
                parts.append(f"The {what}s are not sliced: every head uses the first {head_dim} numbers of each "
                             f"{what} (numbers 0-{head_dim - 1}), so heads 2 to {n_head} read the wrong part"
                             f"{_line(trace, variable, source)}. Keep only head h's numbers: {fix}.")
        else:
            lines = [f"head {h + 1} (h = {h}) used {what} {span(at[0])} instead of {span(h * head_dim)}"
                     for h, at in sorted(off.items())]
            parts.append(f"The {what}s are sliced at the wrong offset{_line(trace, variable, source)}: "
                         + "; ".join(lines) + f". Head h should start at number start = h * HEAD_DIM: {fix}.")
    if unexplained:
        i = wrong[0]
        case, h = cases[i], unexplained[0]
        got = outputs[i][h * head_dim:(h + 1) * head_dim]
        want = floats.multi_head(case["q"], case["keys"], case["values"], n_head)[0][h * head_dim:(h + 1) * head_dim]
        heads = ", ".join(str(x + 1) for x in unexplained)
        parts.append(
            f"The numbers of head{'s' if len(unexplained) > 1 else ''} {heads} are not microgpt's, and none of "
            f"the usual mistakes gives them. At {where(case)}, head {h + 1} gave "
            f"[{', '.join(f'{v:.4f}' for v in got)}] but should give [{', '.join(f'{v:.4f}' for v in want)}]. "
            "Check the scores (q_h dotted with each k, divided by math.sqrt(HEAD_DIM)), the softmax, and the "
            "blend (number j adds up weight x v[j] over all positions).")
    if not parts:
        parts.append(f"Your numbers differ from microgpt's at {where(cases[wrong[0]])}.")
    return " ".join(parts)


def _sliced_but_unused(trace, variable, head_dim, source):
    """' (line N)' (or '') when ``variable`` is sliced right but a later line reads the unsliced list; else None."""
    if not trace or not trace["heads"]:
        return None
    rows = [seen.get(variable) for seen in trace["heads"].values()]
    if not all(isinstance(r, list) and r and all(isinstance(x, list) and len(x) == head_dim for x in r)
               for r in rows):
        return None
    unsliced = re.compile(r"\b{}\b".format("keys" if variable == "k_h" else "values"))
    own = re.compile(rf"^\s*{variable}\s*=|^\s*def |^\s*keys\s*,|\.append\(matvec")
    for number, text in enumerate(source.splitlines(), 1):
        code = text.split("#", 1)[0]
        if (unsliced.search(code) and not own.search(code)
                and trace["lines"].get(variable, 0) < number <= trace["last"]):
            return f" (line {number})"
    return ""
