"""A Check for any exercise of functions: call the learner's named function on the page's inputs, then explain.

The exercise runtime's worker imports this file beside ``sandbox.py``; it
knows nothing of any one exercise. A Check has two steps, as microgpt's:

1. ``collect(source, inputs_json)`` runs the learner's code and calls their
   function ``inputs["function"]`` once per entry of ``inputs["calls"]`` (each
   a list of arguments, copied afresh per call) and returns what it gave as
   plain numbers: JSON ``{"outputs", "failed", "stop"}``. The page compares
   these numbers with the ones it computed itself (from the model's graph), so
   nothing that runs after this point can change the verdict.
2. ``explain(exercise_path, expected_json)`` loads the exercise file (written
   by the worker only after step 1, outside ``sys.path``, so the learner's code
   never finds it) and asks its ``explain(job, expected)`` for the words: the
   Hint's three tiers joined by SEP, '' when the numbers are right.
"""

import importlib.util
import json
import sys

import sandbox
from sandbox import _compile, _json, _namespace, _Quiet, _stop_note, _stop_of

SEP = "\x1e"
MAX_NUMBERS = 200_000  # numbers one Check may give back: more is a shape problem, not a slow answer
_job = {}


class NotNumbers(Exception):
    """What the learner's function gave is not (nested lists of) numbers: ``what`` says what, ``path`` where."""

    def __init__(self, what, path):
        super().__init__(what)
        self.what, self.path = what, path


def plain(value, path="", budget=None):
    """``value`` as nested lists of floats; NotNumbers when anything in it is something else."""
    budget = budget if budget is not None else [MAX_NUMBERS]
    if type(value) is bool or value is None:
        raise NotNumbers(repr(value), path)
    if isinstance(value, (int, float)):
        budget[0] -= 1
        if budget[0] < 0:
            raise NotNumbers(f"more than {MAX_NUMBERS} numbers", path)
        return float(value)
    if isinstance(value, (list, tuple)):
        return [plain(v, f"{path}[{i}]", budget) for i, v in enumerate(value)]
    raise NotNumbers(type(value).__name__, path)


def _copy(value):
    return (
        [_copy(v) for v in value]
        if isinstance(value, list)
        else (dict((k, _copy(v)) for k, v in value.items()) if isinstance(value, dict) else value)
    )


def collect(source, inputs_json):
    """Step 1: JSON {"outputs", "failed", "stop"}; what explain() needs stays in ``_job``."""
    _job.clear()
    try:
        sandbox.restore()
        doc = json.loads(inputs_json)
        _job.update(doc=doc, source=source)
        _job.update(_collect(source, doc["function"], doc["calls"]))
        sandbox.restore()  # explain with the interpreter as shipped, whatever the learner's code changed
        return _json(outputs=_job["outputs"], failed=bool(_job["problem"]), stop=_job["stop"])
    except BaseException as exc:  # noqa: B036 -- e.g. the page's interrupt inside the checker
        sandbox.restore()
        _job.update(outputs=[], problem={"kind": "checker", "error": type(exc).__name__}, stop=_stop_of(exc))
        return _json(outputs=[], failed=True, stop=_stop_of(exc))


def _collect(source, name, calls):
    quiet = _Quiet()
    try:
        code = _compile(source)
    except SyntaxError as exc:
        return {"outputs": [], "problem": {"kind": "syntax", "exc": exc}, "stop": "", "fn": None, "ns": {}}
    ns = _namespace()
    script_error = None
    sys.stdout = sys.stderr = quiet
    try:
        exec(code, ns)
    except BaseException as exc:  # noqa: B036 -- the learner may raise anything
        if _stop_of(exc) in ("interrupt", "memory"):
            return {
                "outputs": [],
                "problem": {"kind": "stop", "note": _stop_note(exc)},
                "stop": _stop_of(exc),
                "fn": None,
                "ns": ns,
            }
        script_error = exc
    finally:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    fn = ns.get(name)
    if not callable(fn):
        kind = "script_error" if script_error is not None else "missing"
        return {"outputs": [], "problem": {"kind": kind, "exc": script_error}, "stop": "", "fn": None, "ns": ns}
    outputs = []
    for i, args in enumerate(calls):
        sys.stdout = sys.stderr = quiet
        try:
            got = fn(*_copy(args))
        except BaseException as exc:  # noqa: B036
            stop = _stop_of(exc)
            if stop in ("interrupt", "memory"):
                return {
                    "outputs": outputs,
                    "problem": {"kind": "stop", "note": _stop_note(exc)},
                    "stop": stop,
                    "fn": fn,
                    "ns": ns,
                }
            return {
                "outputs": outputs,
                "problem": {"kind": "raised", "exc": exc, "call": i},
                "stop": "",
                "fn": fn,
                "ns": ns,
            }
        finally:
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        try:
            outputs.append(plain(got))
        except NotNumbers as bad:
            return {
                "outputs": outputs,
                "problem": {"kind": "not_numbers", "what": bad.what, "path": bad.path, "call": i, "value": got},
                "stop": "",
                "fn": fn,
                "ns": ns,
            }
    problem = {"kind": "error_after", "exc": script_error} if script_error is not None else None
    return {"outputs": outputs, "problem": problem, "stop": "", "fn": fn, "ns": ns}


def load_exercise(path):
    """The exercise file, by path (it is not on sys.path); kept by the guard's later restores."""
    spec = importlib.util.spec_from_file_location("exercise_checks", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sandbox.remember(module)
    return module


def explain(exercise_path, expected_json):
    """Step 2: the words for what collect() found ('' when the numbers are the expected ones)."""
    try:
        exercise = load_exercise(exercise_path)
        hint = exercise.explain(_job, json.loads(expected_json))
        sandbox.restore()
        return SEP.join(hint) if hint else ""
    except BaseException as exc:  # noqa: B036 -- e.g. the page's interrupt while explaining
        sandbox.restore()
        return f"{type(exc).__name__} while explaining your result."
