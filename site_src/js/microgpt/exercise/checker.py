"""The Python side of the multi_head exercise: run the learner's code, collect numbers, explain mistakes.

The page's Pyodide worker (worker.js) imports this file as ``mha_checker``; it
is plain Python, so the tests also run it under CPython.

This module never decides whether an answer passes. ``check(source, inputs)``
runs the learner's code, calls their ``multi_head`` on every case the page
sent (the inputs only), and returns the raw numbers it gave. The page compares
them with microgpt's numbers, which the build computed and shipped beside the
model (export/microgpt/site.py); whatever code running here does, only numbers
equal to microgpt's can pass. What this module adds is the explanation of a
wrong answer: it recomputes the right answer with microgpt's float arithmetic
(``microgpt_floats``, a copy of export/microgpt/floats.py) and tries the
mistakes learners commonly make (``MISTAKES``) until one reproduces the
learner's numbers.

Every job starts clean (``restore()``, after ``start()`` took the snapshot): a fresh namespace, and every
module as it was when the worker started: the attributes of every module and
of every class defined in Python, the code of every function, the import
system, the streams, the working folder, the environment. ``healthy()``
then says whether the interpreter can still be trusted (the standard library's
files untouched, the basics computing what they should); when it cannot, the
worker replaces the interpreter.

JSON in and out: ``run(source)`` -> ``{"ok", "error", "stop"}``;
``check(source, inputs_json)`` -> ``{"outputs", "message", "stop"}``, where
``outputs`` holds one list of floats per case (``null`` once a case failed)
and ``stop`` is "" or what ended the code early: "interrupt" (a
KeyboardInterrupt: the page knows whether it sent one), "exit" (sys.exit) or
"memory" (MemoryError).
"""
import builtins
import gc
import json
import linecache
import math
import os
import re
import sys
import traceback
import types

try:  # the worker writes microgpt's float twin beside this file
    import microgpt_floats as floats
except ImportError:  # under CPython the tests take it from the repository
    from export.microgpt import floats

FILENAME = "exercise.py"
HOME = os.getcwd()          # where the page writes microgpt-trained.json
LINE_LIMIT = 400            # characters of one traceback line kept in a message
OUTPUT_LIMIT = 20000        # characters a Run passes on; the rest is dropped here, cheaply


# ---------------------------------------------------------------------------
# A clean interpreter for every job.
# ---------------------------------------------------------------------------
def _make_guard():
    """Take a snapshot of the interpreter now; return functions that restore and test it.

    Everything the restoring code needs is held in this closure, and it calls
    no builtin by name before the builtins are back, so code that replaced
    them cannot steer the repair.
    """
    missing = object()
    immutable = 1 << 8      # Py_TPFLAGS_IMMUTABLETYPE: classes written in C
    modules = dict(sys.modules)
    module_dicts = {}
    class_dicts = []
    function_parts = []
    seen_classes = set()
    for name, module in modules.items():
        namespace = getattr(module, "__dict__", None)
        if type(namespace) is not dict:
            continue
        module_dicts[name] = (namespace, dict(namespace))
        for value in namespace.values():
            if isinstance(value, type) and not value.__flags__ & immutable and id(value) not in seen_classes:
                seen_classes.add(id(value))
                class_dicts.append((value, {k: v for k, v in vars(value).items()
                                            if k not in ("__dict__", "__weakref__")}))
    for namespace in [saved for _, saved in module_dicts.values()] + [saved for _, saved in class_dicts]:
        for value in namespace.values():
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if type(value) is types.FunctionType:
                function_parts.append((value, value.__code__, value.__defaults__, value.__kwdefaults__))
    lists = [(sys.path, list(sys.path)), (sys.meta_path, list(sys.meta_path)),
             (sys.path_hooks, list(sys.path_hooks))]
    importer_cache = dict(sys.path_importer_cache)
    environ = dict(os.environ)
    recursion = sys.getrecursionlimit()
    max_digits = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else None
    builtins_dict, builtins_saved = module_dicts["builtins"]
    sys_dict, sys_saved = module_dicts["sys"]
    real_modules = sys.modules       # the interpreter's own table, even if sys.modules is rebound
    setattr_, delattr_, chdir = setattr, delattr, os.chdir

    def library_files():
        found = []
        for entry in sys.path:
            if entry and os.path.exists(entry):
                info = os.stat(entry)
                found.append((entry, info.st_size, info.st_mtime,
                              sorted(os.listdir(entry)) if os.path.isdir(entry) else None))
        return found

    library = library_files()
    reference = floats.multi_head([0.5, -1.0, 0.25, 2.0] * 4, [[0.1 * i for i in range(16)], [1.0] * 16],
                                  [[float(i) for i in range(16)], [-1.0] * 16], 4)

    def restore():
        # Builtins and sys first, with nothing but syntax and dict methods.
        for namespace, saved in ((builtins_dict, builtins_saved), (sys_dict, sys_saved)):
            for key in [k for k in namespace if k not in saved]:
                del namespace[key]
            for key, value in saved.items():
                if namespace.get(key, missing) is not value:
                    namespace[key] = value
        for name in [n for n in real_modules if n not in modules]:
            del real_modules[name]
        for name, module in modules.items():
            if real_modules.get(name, missing) is not module:
                real_modules[name] = module
        for namespace, saved in module_dicts.values():
            for key in [k for k in namespace if k not in saved]:
                del namespace[key]
            for key, value in saved.items():
                if namespace.get(key, missing) is not value:
                    namespace[key] = value
        for cls, saved in class_dicts:
            current = vars(cls)
            for key in [k for k in current if k not in saved and k not in ("__dict__", "__weakref__")]:
                delattr_(cls, key)
            for key, value in saved.items():
                if current.get(key, missing) is not value:
                    setattr_(cls, key, value)
        for fn, code, defaults, kwdefaults in function_parts:
            if fn.__code__ is not code:
                fn.__code__ = code
            if fn.__defaults__ is not defaults:
                fn.__defaults__ = defaults
            if fn.__kwdefaults__ is not kwdefaults:
                fn.__kwdefaults__ = kwdefaults
        for target, saved in lists:
            if target != saved:
                target[:] = saved
        if sys.path_importer_cache != importer_cache:
            sys.path_importer_cache.clear()
            sys.path_importer_cache.update(importer_cache)
        if dict(os.environ) != environ:
            os.environ.clear()
            os.environ.update(environ)
        sys.settrace(None)
        sys.setprofile(None)
        sys.setrecursionlimit(recursion)
        if max_digits is not None:
            sys.set_int_max_str_digits(max_digits)
        gc.enable()
        try:
            chdir(HOME)
        except OSError:
            pass
        linecache.cache.pop(FILENAME, None)

    def healthy():
        """'' when this interpreter computes as it did at the start; else the reason it cannot be trusted."""
        try:
            if library_files() != library:
                return "your code changed the files of Python's standard library"
            basics = (sum([1.5, 2.5]) == 4.0 and math.exp(0.0) == 1.0 and json.loads("[0.5]") == [0.5]
                      and max([1, 3, 2]) == 3 and len("abc") == 3 and isinstance(1.0, float))
            if not basics:
                return "your code changed how Python computes, in a way that could not be undone"
            if floats.multi_head([0.5, -1.0, 0.25, 2.0] * 4, [[0.1 * i for i in range(16)], [1.0] * 16],
                                 [[float(i) for i in range(16)], [-1.0] * 16], 4) != reference:
                return "your code changed microgpt's arithmetic, in a way that could not be undone"
        except BaseException as exc:  # noqa: B036 -- any failure here means: do not trust it
            return f"Python could not test itself ({type(exc).__name__})"
        return ""

    def remember(module):
        """Take ``module``'s attributes as they are now as the ones to restore."""
        if module is not None:
            module_dicts[module.__name__] = (module.__dict__, dict(module.__dict__))

    return restore, healthy, remember


def _not_started():
    raise RuntimeError("mha_checker.start() has not been called")


restore = healthy = _not_started


def start():
    """Take the snapshot every job goes back to; call once, after everything is imported."""
    global restore, healthy
    restore, healthy, remember = _make_guard()
    remember(sys.modules.get(__name__))


# ---------------------------------------------------------------------------
# Running the learner's code.
# ---------------------------------------------------------------------------
def _compile(source):
    # Register the source so tracebacks can quote the learner's lines.
    linecache.cache[FILENAME] = (len(source), None, source.splitlines(True), FILENAME)
    return compile(source, FILENAME, "exec", dont_inherit=True)


def _namespace():
    return {"__name__": "__main__", "__file__": FILENAME, "__builtins__": builtins}


def _shorten(line):
    return line if len(line) <= LINE_LIMIT else line[:LINE_LIMIT] + "... (cut)"


def learner_traceback(exc):
    """The traceback of ``exc`` showing only the frames of the learner's file."""
    if isinstance(exc, SyntaxError):
        lines = traceback.format_exception_only(type(exc), exc)
    else:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == FILENAME]
        lines = ["Traceback (most recent call last):\n"] if frames else []
        lines += traceback.format_list(frames)
        lines += traceback.format_exception_only(type(exc), exc)
    return "\n".join(_shorten(line) for line in "".join(lines).rstrip().split("\n"))


def _learner_line(exc):
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == FILENAME]
    return frames[-1].lineno if frames else None


def _stop_of(exc):
    """What kind of early end ``exc`` is: "interrupt", "exit", "memory" or ""."""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupt"
    if isinstance(exc, SystemExit):
        return "exit"
    if isinstance(exc, MemoryError):
        return "memory"
    return ""


def _stop_note(exc):
    line = _learner_line(exc)
    at = f" at line {line}" if line else ""
    if isinstance(exc, SystemExit):
        return f"Your code called exit(){at} (sys.exit), so it stopped there."
    if isinstance(exc, MemoryError):
        return f"Your code used up Python's memory{at} (MemoryError)."
    return learner_traceback(exc)


def _json(**fields):
    return json.dumps(fields)


def run(source):
    """Execute the learner's code, prints going to the real stdout."""
    try:
        restore()
        try:
            code = _compile(source)
        except SyntaxError as exc:
            return _json(ok=False, error=learner_traceback(exc), stop="")
        budget = [OUTPUT_LIMIT]
        sys.stdout, sys.stderr = _Capped(sys.__stdout__, budget), _Capped(sys.__stderr__, budget)
        try:
            exec(code, _namespace())
        except BaseException as exc:  # noqa: B036 -- the learner may raise anything
            stop = _stop_of(exc)
            message = _stop_note(exc) if stop == "exit" or stop == "memory" else learner_traceback(exc)
            return _json(ok=stop == "exit", error=message, stop=stop)
        finally:
            _flush()
        return _json(ok=True, error="", stop="")
    except BaseException as exc:  # noqa: B036 -- e.g. the page's interrupt between two statements
        return _json(ok=False, error=f"{type(exc).__name__} while running your code.", stop=_stop_of(exc))
    finally:
        restore()


def _flush():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: B036 -- the learner may have replaced the stream
            pass


class _Capped:
    """Passes on the first OUTPUT_LIMIT characters of a job's prints (shared by stdout and stderr),
    then one line saying the rest was cut; later prints cost next to nothing."""

    def __init__(self, stream, budget):
        self.stream, self.budget = stream, budget

    def write(self, text):
        left = self.budget[0]
        if left > 0:
            part = text[:left]
            self.budget[0] = left - len(part)
            self.stream.write(part)
            if self.budget[0] <= 0:
                self.stream.write(f"\n[output cut here: only the first {OUTPUT_LIMIT:,} characters are shown]\n")
                self.stream.flush()
        return len(text)

    def flush(self):
        self.stream.flush()


class _Quiet:
    """A stream that drops what it is given: Check runs the learner's code silently."""

    def write(self, text):
        return len(text)

    def flush(self):
        pass


def check(source, inputs_json):
    """Run ``multi_head`` on every case; JSON {"outputs", "message", "stop"}.

    ``inputs_json``: {"n_head", "head_dim", "attn_wo", "cases": [{"name", "pos", "q", "keys", "values"}]}.
    """
    try:
        restore()
        doc = json.loads(inputs_json)
        cases = doc["cases"]
        for case in cases:
            case["n_head"] = doc["n_head"]
        outputs, problem, stop, fn = _collect(source, cases)
        restore()   # compare and explain with the interpreter as shipped, whatever the learner's code changed
        if fn is not None and not problem and stop == "" and not _all_right(cases, outputs):
            trace = _probe(fn, cases)
            restore()
            problem = explain(cases, outputs, trace, source, doc.get("attn_wo"))
        return _json(outputs=outputs, message=problem, stop=stop)
    except BaseException as exc:  # noqa: B036 -- e.g. the page's interrupt inside the checker
        restore()
        return _json(outputs=[], message=f"{type(exc).__name__} while checking your code.", stop=_stop_of(exc))


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
            return outputs, _raised(exc, case, fn, cases), "", fn
        finally:
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        if numbers is None:
            return outputs, _shape_problem(out, case), "", fn
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
