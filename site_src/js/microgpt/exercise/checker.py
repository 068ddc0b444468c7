"""Runs and grades the learner's code for the multi_head exercise.

Loaded by the page's Pyodide worker (site_src/js/microgpt/exercise/worker.js) as the
module ``mha_checker``; it also runs under plain CPython, which the tests use.

``run(source)`` executes the code as the file "exercise.py" (so tracebacks
show the learner's own line numbers) and returns a JSON string
``{"ok": bool, "error": str, "interrupted": bool}``. ``check(source)`` executes
it quietly, then calls the learner's ``multi_head`` for every position of a few
names on the real trained model and compares each result, and the result after
``attn_wo``, with microgpt's arithmetic. It returns a JSON string
``{"passed": bool, "message": str, "interrupted": bool}``; the message names
the mistake when it is one we can recognise (append instead of extend, a wrong
length, keys or values not sliced or sliced at the wrong offset, an exception).

The right answers come from export/microgpt.py itself (``forward_attention``
and its float helpers, which sum left to right and never with ``sum()``, since
that compensates rounding from Python 3.12 on); the page's worker writes that
file beside this one. Learners' numbers are compared with a relative tolerance
of 1e-9, so any order of summation they choose passes.
"""
import builtins
import contextlib
import io
import json
import linecache
import os
import sys
import traceback

FILENAME = "exercise.py"
MODEL_PATH = "microgpt-trained.json"
NAMES = ("emma", "kristopher", "olivia", "zoe")
TOLERANCE = 1e-9
OUTPUT_LIMIT = 20000
HOME = os.getcwd()   # where the page wrote microgpt-trained.json

_model = None
_cases = None


try:  # in the browser the worker writes export/microgpt.py beside this module
    import microgpt
except ImportError:  # under CPython the tests import it from the repository
    from export import microgpt

# microgpt's float arithmetic, in its own summation order.
_total, _linear, _softmax = microgpt._total, microgpt._linear, microgpt._softmax


def load_model(path=MODEL_PATH):
    global _model
    if _model is None:
        with open(path, encoding="utf-8") as fh:
            _model = json.load(fh)
    return _model


def head_result(q, keys, values, head, key_at, value_at, head_dim):
    """One head's numbers when it reads keys from ``key_at`` and values from ``value_at``."""
    weights = _head_weights(q, keys, head, key_at, head_dim)
    return _blend(weights, values, value_at, head_dim)


def _head_weights(q, keys, head, key_at, head_dim):
    lo = head * head_dim
    scale = (head_dim ** 0.5) ** -1
    scores = [_total(q[lo + d] * key[key_at + d] for d in range(head_dim)) * scale for key in keys]
    return _softmax(scores)


def _blend(weights, values, value_at, head_dim):
    return [_total(weights[t] * values[t][value_at + d] for t in range(len(values)))
            for d in range(head_dim)]


class Case:
    """The inputs of multi_head at one position of one name, and the right answers."""

    def __init__(self, name, pos, q, keys, values, expected, after_wo):
        self.name, self.pos = name, pos
        self.q, self.keys, self.values = q, keys, values
        self.expected, self.after_wo = expected, after_wo

    def where(self):
        what = f"letter {self.name[self.pos - 1]!r}" if self.pos else "the start marker"
        keys = "1 key" if self.pos == 0 else f"{self.pos + 1} keys"
        return f'"{self.name}" at position {self.pos} ({what}; {keys})'


def cases():
    """Every position of every name in NAMES, longest name first."""
    global _cases
    if _cases is None:
        model = load_model()
        found = []
        for name in NAMES:
            run = microgpt.forward_attention(model["weights"], model["uchars"], name, model["config"]["n_head"])
            for pos, q in enumerate(run["q"]):
                found.append(Case(name, pos, q, run["keys"][:pos + 1], run["values"][:pos + 1],
                                  run["heads_out"][pos], run["attn_out"][pos]))
        _cases = found
    return _cases


# ---------------------------------------------------------------------------
# Running the learner's code.
# ---------------------------------------------------------------------------
class _Capped(io.TextIOBase):
    """A text stream that keeps the first OUTPUT_LIMIT characters and drops the rest."""

    def __init__(self):
        self.parts, self.size = [], 0

    def writable(self):
        return True

    def write(self, text):
        if self.size < OUTPUT_LIMIT:
            self.parts.append(text[:OUTPUT_LIMIT - self.size])
        self.size += len(text)
        return len(text)

    def getvalue(self):
        return "".join(self.parts)


def _compile(source):
    # Register the source so tracebacks can quote the learner's lines.
    linecache.cache[FILENAME] = (len(source), None, source.splitlines(True), FILENAME)
    return compile(source, FILENAME, "exec", dont_inherit=True)


def _fresh_process():
    """Undo what earlier learner code may have changed: streams and working folder."""
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    try:
        os.chdir(HOME)
    except OSError:
        pass


def _namespace():
    return {"__name__": "__main__", "__file__": FILENAME, "__builtins__": builtins}


def learner_traceback(exc):
    """The traceback of ``exc`` with only the frames of the learner's file."""
    if isinstance(exc, SyntaxError):
        lines = traceback.format_exception_only(type(exc), exc)
    else:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == FILENAME]
        lines = ["Traceback (most recent call last):\n"] if frames else []
        lines += traceback.format_list(frames)
        lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines).rstrip()


def run(source):
    """Execute the learner's code with its prints going to the real stdout."""
    try:
        _fresh_process()
        try:
            code = _compile(source)
        except SyntaxError as exc:
            return _json(ok=False, error=learner_traceback(exc))
        try:
            exec(code, _namespace())
        except SystemExit:
            pass
        except Exception as exc:
            return _json(ok=False, error=learner_traceback(exc))
        finally:
            sys.stdout.flush()
        return _json(ok=True)
    except KeyboardInterrupt:
        return _json(ok=False, interrupted=True)


def check(source):
    """Grade the learner's code; returns JSON {"passed", "message", "interrupted"}."""
    try:
        _fresh_process()
        passed, message = grade(source)
        return _json(passed=passed, message=message)
    except KeyboardInterrupt:
        return _json(passed=False, interrupted=True,
                     message="Your code was stopped: it ran for too long.")


def _json(**fields):
    fields.setdefault("interrupted", False)
    return json.dumps(fields)


def grade(source):
    """(passed, message) for the learner's source."""
    try:
        code = _compile(source)
    except SyntaxError as exc:
        return False, "Python cannot read your code (a syntax error):\n\n" + learner_traceback(exc)
    ns = _namespace()
    script_error = None
    sink = _Capped()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        try:
            exec(code, ns)
        except SystemExit:
            pass
        except Exception as exc:
            script_error = exc
    fn = ns.get("multi_head")
    if not callable(fn):
        if script_error is not None:
            return False, ("Your code stopped with an error before multi_head was defined:\n\n"
                           + learner_traceback(script_error))
        return False, ("There is no function called multi_head in your code. "
                       "Press Reset to get the starter code back.")
    problem = grade_function(fn)
    if problem:
        return False, problem
    if script_error is not None:
        return False, ("multi_head is right, but the lines after it stop with an error:\n\n"
                       + learner_traceback(script_error))
    all_cases = cases()
    last = [c for c in all_cases if c.name == "emma"][-1]
    names = sorted({c.name for c in all_cases})
    return True, (
        f"Passed! multi_head gives microgpt's numbers at all {len(all_cases)} positions of "
        f"{', '.join(names)}, and after attn_wo the 16 numbers match too. For the last letter "
        f"of \"emma\", attn_wo turns your four heads into "
        f"[{', '.join(f'{v:.3f}' for v in last.after_wo)}].")


def _close(got, want):
    return all(abs(g - w) <= TOLERANCE * max(1.0, abs(w)) for g, w in zip(got, want))


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def grade_function(fn):
    """A message describing what is wrong with ``fn``, or "" when it is right."""
    model = load_model()
    n_head, head_dim = model["config"]["n_head"], model["config"]["head_dim"]
    n_embd = n_head * head_dim
    all_cases = cases()
    outs = []
    sink = _Capped()
    for case in all_cases:
        try:
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                out = fn(list(case.q), [list(k) for k in case.keys], [list(v) for v in case.values])
        except Exception as exc:
            return (f"multi_head raised an error when the checker called it for {case.where()}:\n\n"
                    + learner_traceback(exc))
        problem = _shape_problem(out, case, n_head, head_dim)
        if problem:
            return problem
        outs.append([float(v) for v in out])
    wrong = [i for i, (case, out) in enumerate(zip(all_cases, outs)) if not _close(out, case.expected)]
    if wrong:
        return _diagnose(all_cases, outs, wrong, n_head, head_dim)
    wo = model["weights"]["layer0.attn_wo"]
    for case, out in zip(all_cases, outs):
        if not _close(_linear(out, wo), case.after_wo):   # cannot happen when out is right
            return f"After attn_wo your numbers differ from microgpt's at {case.where()}."
    assert n_embd == len(outs[0])
    return ""


def _shape_problem(out, case, n_head, head_dim):
    n_embd = n_head * head_dim
    if out is None:
        return ("multi_head returned None. Its last line should be `return out`, "
                "lined up with `out = []` (not inside the for loop).")
    if not isinstance(out, (list, tuple)):
        return f"multi_head should return the list out, but it returned a {type(out).__name__}."
    if not out:
        return ("out is empty: nothing was added to it. The second blank should add each head's "
                f"{head_dim} blended numbers to the end of out with out.extend(blended).")
    if any(isinstance(v, (list, tuple)) for v in out):
        flat = []
        for v in out:
            flat.extend(v if isinstance(v, (list, tuple)) else [v])
        sizes = ", ".join(str(len(v)) if isinstance(v, (list, tuple)) else "1" for v in out)
        right = (" The numbers inside them are right; only the way they are added is wrong."
                 if len(flat) == n_embd and all(_is_number(v) for v in flat)
                 and _close(flat, case.expected) else "")
        return (f"out holds lists instead of numbers: it has {len(out)} items of sizes {sizes}. "
                f"out.append(blended) adds the whole list as ONE item; use out.extend(blended), "
                f"which adds its {head_dim} numbers one by one, so 4 heads give {n_embd} numbers."
                + right)
    bad = next((i for i, v in enumerate(out) if not _is_number(v)), None)
    if bad is not None:
        return (f"out should hold only numbers, but item {bad} is {out[bad]!r} "
                f"(a {type(out[bad]).__name__}).")
    if len(out) == n_embd:
        return ""
    message = (f"out has {len(out)} numbers at {case.where()}; it should have {n_embd}: "
               f"{n_head} heads x {head_dim} numbers.")
    if len(out) == head_dim:
        message += " That is one head's worth: is `return out` indented inside the for loop?"
    elif len(out) == n_head * n_embd and _unsliced_values(out, case, n_head, head_dim):
        message += (f" Each head blended all {n_embd} numbers of every value: the values are not "
                    f"sliced. Keep only head h's numbers: [v[start:start + HEAD_DIM] for v in values].")
    elif len(out) > n_embd:
        message += " Are some heads' numbers added more than once, or not sliced to HEAD_DIM?"
    return message


def _unsliced_values(out, case, n_head, head_dim):
    n_embd = n_head * head_dim
    for head in range(n_head):
        chunk = out[head * n_embd:(head + 1) * n_embd]
        if not any(_close(chunk, _blend(_head_weights(case.q, case.keys, head, k_at, head_dim),
                                        case.values, 0, n_embd))
                   for k_at in range(n_embd - head_dim + 1)):
            return False
    return True


def _diagnose(all_cases, outs, wrong, n_head, head_dim):
    """Explain wrong numbers: find, per head, which key and value offsets reproduce them."""
    n_embd = n_head * head_dim
    offsets = range(n_embd - head_dim + 1)
    # Look at the informative cases first: many positions, and the wrong ones.
    order = sorted(range(len(all_cases)), key=lambda i: (i not in wrong, -all_cases[i].pos))
    fits = []
    for head in range(n_head):
        possible = {(k, v) for k in offsets for v in offsets}
        for i in order:
            case, chunk = all_cases[i], outs[i][head * head_dim:(head + 1) * head_dim]
            weights = {}
            kept = set()
            for k_at, v_at in possible:
                if k_at not in weights:
                    weights[k_at] = _head_weights(case.q, case.keys, head, k_at, head_dim)
                if _close(chunk, _blend(weights[k_at], case.values, v_at, head_dim)):
                    kept.add((k_at, v_at))
            possible = kept
            if not possible:
                break
        fits.append(possible)

    def span(at):
        return f"numbers {at}-{at + head_dim - 1} ([{at}:{at + head_dim}])"

    parts = []
    unexplained = [h for h in range(n_head) if not fits[h]]
    explained = [h for h in range(n_head) if fits[h]]
    for what, side, fix in (("key", 0, "[k[start:start + HEAD_DIM] for k in keys]"),
                            ("value", 1, "[v[start:start + HEAD_DIM] for v in values]")):
        seen = {h: sorted({pair[side] for pair in fits[h]}) for h in explained}
        off = {h: at for h, at in seen.items() if h * head_dim not in at}
        if not off:
            continue
        if all(0 in seen[h] for h in explained) and len(explained) == n_head:
            parts.append(f"The {what}s are not sliced: every head uses the first {head_dim} numbers "
                         f"of each {what} (numbers 0-{head_dim - 1}), so heads 2 to {n_head} read the "
                         f"wrong part. Keep only head h's numbers: {fix}.")
        else:
            lines = [f"head {h + 1} (h = {h}) used {what} {span(at[0])} instead of "
                     f"{span(h * head_dim)}" for h, at in sorted(off.items())]
            parts.append(f"The {what}s are sliced at the wrong offset: " + "; ".join(lines)
                         + f". Head h should start at number start = h * HEAD_DIM: {fix}.")
    if unexplained:
        case_i = wrong[0]
        case = all_cases[case_i]
        h = unexplained[0]
        got = outs[case_i][h * head_dim:(h + 1) * head_dim]
        want = case.expected[h * head_dim:(h + 1) * head_dim]
        heads = ", ".join(str(h + 1) for h in unexplained)
        parts.append(
            f"The numbers of head{'s' if len(unexplained) > 1 else ''} {heads} are not microgpt's, "
            f"and they do not come from slicing at another offset either. At {case.where()}, head "
            f"{h + 1} gave [{', '.join(f'{v:.4f}' for v in got)}] but should give "
            f"[{', '.join(f'{v:.4f}' for v in want)}]. Check the query slice, the scores, the "
            f"softmax and the blend (number j adds up weight x value number j over all positions), "
            f"and that the heads are added in order 1 to {n_head}.")
    if not parts:
        case = all_cases[wrong[0]]
        parts.append(f"Your numbers differ from microgpt's at {case.where()}.")
    return " ".join(parts)
