"""The run protocol of the page's Python: run the learner's code and report how it ended.

The exercise's Pyodide worker (site_src/js/microgpt/exercise/worker.js) writes
this file as ``sandbox.py`` and imports it; it is plain Python, so the tests also
run it under CPython. ``diagnosis.py`` (calling multi_head on the cases and
explaining wrong numbers) builds on it.

Every job starts clean (``restore()``, after ``start()`` took the snapshot; the
costly part of it, a walk over every module and class, ``prepare()`` makes
before the worker's memory snapshot, heap_recipe.js): a
fresh namespace, and every module as it was when the worker started: the
attributes of every module and of every class defined in Python, the code of
every function, the import system, the streams, the working folder, the
environment. ``healthy()`` then says whether the interpreter can still be
trusted (the standard library's files untouched, the basics computing what they
should). The page runs every job in a fresh worker as well (runner.js), so this
guard only has to keep one job's explanation honest after the learner's code ran.

JSON out: ``run(source)`` -> ``{"ok", "error", "stop"}``, where ``stop`` is ""
or what ended the code early: "interrupt" (a KeyboardInterrupt: the page knows
whether it sent one), "exit" (sys.exit) or "memory" (MemoryError). Tracebacks
show only the frames of the learner's file, ``exercise.py``.
"""

import builtins
import gc
import json
import linecache
import math
import os
import sys
import traceback
import types

FILENAME = "exercise.py"
HOME = os.getcwd()  # where the page writes microgpt-trained.json
LINE_LIMIT = 400  # characters of one traceback line kept in a message
OUTPUT_LIMIT = 20000  # characters a Run passes on; the rest is dropped here, cheaply


# ---------------------------------------------------------------------------
# A clean interpreter for every job.
# ---------------------------------------------------------------------------
IMMUTABLE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: classes written in C
UNSETTABLE = ("__dict__", "__weakref__")  # a class's own descriptors, never set back


def _classes_and_functions(namespaces, seen):
    """The Python classes in ``namespaces`` not in ``seen`` (ids), with copies of their dicts,
    and the functions in ``namespaces`` and in those classes, with their code and defaults."""
    class_dicts = []
    for namespace in namespaces:
        for value in namespace.values():
            if isinstance(value, type) and not value.__flags__ & IMMUTABLE and id(value) not in seen:
                seen.add(id(value))
                class_dicts.append((value, dict(vars(value))))
    function_parts = []
    for namespace in list(namespaces) + [saved for _, saved in class_dicts]:
        for value in namespace.values():
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if type(value) is types.FunctionType:
                function_parts.append((value, value.__code__, value.__defaults__, value.__kwdefaults__))
    return class_dicts, function_parts


def _unchanged(current, saved):
    try:
        return current == saved  # in C, each value by identity first
    except Exception:  # noqa: BLE001 -- a value that cannot compare: take a new copy
        return False


NOTHING_PREPARED = ({}, [], [])


def _survey(since=NOTHING_PREPARED):
    """Copies of every module's and class's attributes, and every function's code, as they are now:
    (module_dicts, class_dicts, function_parts).

    This walk over every module, class and function is most of the guard's
    cost (~0.1 s in the browser). ``prepare()`` makes it before the exercise's
    memory snapshot is taken; the survey ``since`` then gives what it holds for
    every module and class whose attributes are unchanged, and only modules
    imported or edited since, and classes edited since, are copied and walked again.
    """
    old_modules, old_classes, old_functions = since
    module_dicts, changed = {}, []
    for name, module in dict(sys.modules).items():
        namespace = getattr(module, "__dict__", None)
        if type(namespace) is not dict:
            continue
        before = old_modules.get(name)
        if before is not None and before[0] is namespace and _unchanged(namespace, before[1]):
            module_dicts[name] = before
        else:
            module_dicts[name] = (namespace, dict(namespace))
            changed.append(module_dicts[name][1])
    class_dicts = []
    for cls, saved in old_classes:
        if _unchanged(vars(cls), saved):
            class_dicts.append((cls, saved))
        else:
            class_dicts.append((cls, dict(vars(cls))))
            changed.append(class_dicts[-1][1])
    seen = {id(cls) for cls, _ in old_classes}
    new_classes, new_functions = _classes_and_functions(changed, seen)
    return module_dicts, class_dicts + new_classes, old_functions + new_functions


_prepared = NOTHING_PREPARED


def prepare():
    """Make the guard's costly survey now (before the memory snapshot); ``start()`` completes it."""
    global _prepared
    _prepared = _survey()


def _make_guard(survey):
    """Take a snapshot of the interpreter now; return functions that restore and test it.

    Everything the restoring code needs is held in this closure, and it calls
    no builtin by name before the builtins are back, so code that replaced
    them cannot steer the repair.
    """
    missing = object()
    module_dicts, class_dicts, function_parts = survey
    modules = dict(sys.modules)
    lists = [(sys.path, list(sys.path)), (sys.meta_path, list(sys.meta_path)), (sys.path_hooks, list(sys.path_hooks))]
    importer_cache = dict(sys.path_importer_cache)
    environ = dict(os.environ)
    recursion = sys.getrecursionlimit()
    max_digits = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else None
    builtins_dict, builtins_saved = module_dicts["builtins"]
    sys_dict, sys_saved = module_dicts["sys"]
    real_modules = sys.modules  # the interpreter's own table, even if sys.modules is rebound
    setattr_, delattr_, chdir = setattr, delattr, os.chdir
    unsettable = UNSETTABLE

    def library_files():
        found = []
        for entry in sys.path:
            if entry and os.path.exists(entry):
                info = os.stat(entry)
                found.append(
                    (entry, info.st_size, info.st_mtime, sorted(os.listdir(entry)) if os.path.isdir(entry) else None)
                )
        return found

    library = library_files()

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
            for key in [k for k in current if k not in saved and k not in unsettable]:
                delattr_(cls, key)
            for key, value in saved.items():
                if current.get(key, missing) is not value and key not in unsettable:
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
            basics = (
                sum([1.5, 2.5]) == 4.0
                and math.exp(0.0) == 1.0
                and json.loads("[0.5]") == [0.5]
                and max([1, 3, 2]) == 3
                and len("abc") == 3
                and isinstance(1.0, float)
            )
            if not basics:
                return "your code changed how Python computes, in a way that could not be undone"
        except BaseException as exc:  # noqa: B036 -- any failure here means: do not trust it
            return f"Python could not test itself ({type(exc).__name__})"
        return ""

    def remember(module):
        """Take ``module``'s attributes as they are now as the ones to restore."""
        if module is not None:
            module_dicts[module.__name__] = (module.__dict__, dict(module.__dict__))

    return restore, healthy, remember


def _not_started(*args):
    raise RuntimeError("sandbox.start() has not been called")


restore = healthy = remember = _not_started


NO_INPUT = "this exercise reads no input: input() has nothing to read here. Write the values into your code instead."


def _no_input(prompt=""):
    """input() for the exercise: the page has no keyboard to offer Python, so say so in words."""
    raise EOFError(NO_INPUT)


def start():
    """Take the snapshot every job goes back to; call once, after everything is imported."""
    global restore, healthy, remember
    builtins.input = _no_input
    restore, healthy, remember = _make_guard(_survey(since=_prepared))
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
