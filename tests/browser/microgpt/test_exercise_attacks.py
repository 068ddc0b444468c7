"""Learner code with bad intentions, in real Pyodide: each verdict depends only on the code submitted for it.

Every Check and every Run gets a fresh Pyodide worker (site_src/js/microgpt/runner.js),
the page computes microgpt's answers itself and the worker gets only the inputs.
Each attack below is submitted together with a wrong answer (which must not pass),
then the correct solution (which must pass) and the unchanged starter (which must
fail with its own message) follow, on a cross-origin isolated page and on a plain one.
Each job waits for a fresh worker, so this file takes a while on a busy machine.
"""
from __future__ import annotations

import pytest

from tests.browser_util import PageWatch
from tests.browser.microgpt.test_exercise_page import CHECK_JS, open_microgpt
from tests.pyodide.test_checker_without_browser import MISTAKES, solution, starter

pytestmark = pytest.mark.browser

RUN_JS = "(source) => window.mhaExercise.run(source)"

# JavaScript run from Python through the Pyodide API object, as in issue 21.
_JS = "import pyodide_js\nrun_js = pyodide_js.constructor.constructor\n"
ATTACKS = {
    # Any later verdict "Passed!": every message the worker sends claims the right numbers.
    "pyodide_js_post_message": _JS + (
        "run_js('''const post = self.postMessage.bind(self);\n"
        "self.postMessage = (m) => post(m && m.result ? { ...m, result: { ...m.result, failed: false, stop: '', message: '' } } : m);''')()\n"),
    "json_parse_patch": _JS + "run_js('JSON.parse = () => ({ outputs: [], failed: false, stop: \"\", ok: true })')()\n",
    "json_default_encoder": "import json\njson._default_encoder.encode = lambda o: '{\"outputs\": [], \"failed\": false, \"stop\": \"\"}'\n",
    "gc_builtins_copy": (
        "import gc\n"
        "for d in gc.get_objects():\n"
        "    if type(d) is dict and 'print' in d and 'len' in d and d is not __builtins__.__dict__:\n"
        "        d['len'] = lambda x: 16\n"
        "        d['sum'] = lambda *a: 0.0\n"),
    "closure_edit": (
        "import sandbox\n"
        "for cell in sandbox.restore.__closure__ or ():\n"
        "    try:\n"
        "        cell.cell_contents = None\n"
        "    except Exception:\n"
        "        pass\n"),
    "import_reference": "import microgpt_floats as F\n",
    # Replace the saved Python heap later workers start from (site_src/js/microgpt/snapshot.js):
    # its digest, kept where no worker can write, no longer matches, so it is never restored.
    "snapshot_cache": _JS + (
        "run_js('''caches.open('pyodide-snapshot').then(async (c) => {\n"
        "  for (const r of await c.keys()) await c.put(r, new Response(new Uint8Array(1 << 20).fill(7)));\n"
        "});''')()\n"),
    "tmp_file": "open('/tmp/answers.py', 'w').write('PASS = True\\n')\n",
    "input": "input('your name? ')\n",
    "deep_recursion": "import sys\nsys.setrecursionlimit(100000)\ndef down(n):\n    return down(n + 1)\ntry:\n    down(0)\nexcept RecursionError:\n    pass\n",
}
REFERENCE_SOLUTION = ("import microgpt_floats as F\n\n\ndef multi_head(q, keys, values):\n"
                      "    return F.multi_head(q, keys, values, 4)[0]\n")


def wrong() -> str:
    return MISTAKES["scale_head_dim"][0]()


@pytest.fixture(scope="module", params=["isolated", "plain"])
def exercise(request, browser, servers):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    # The deep-recursion attack overflows the browser's stack: Pyodide says so on the console, and that
    # job's worker is thrown away like any other.
    watch = PageWatch(page, allow_console=(r"Pyodide has suffered a fatal error", r"The cause of the fatal error",
                                           r"Maximum call stack size exceeded"))
    info = open_microgpt(page, servers[request.param])
    assert info["isolated"] is (request.param == "isolated")
    yield page
    try:
        watch.check()
    finally:
        context.close()


def check(page, source: str) -> dict:
    return page.evaluate(CHECK_JS, source)


@pytest.mark.parametrize("name", list(ATTACKS))
def test_an_attack_changes_no_verdict(exercise, name):
    """The attack with a wrong answer fails; then the solution passes and the starter fails, as without it."""
    page = exercise
    verdict = check(page, ATTACKS[name] + wrong())
    assert not verdict["passed"], (name, verdict)
    verdict = check(page, solution())
    assert verdict["passed"] and verdict["message"].startswith("Passed!"), (name, verdict)
    verdict = check(page, starter())
    assert not verdict["passed"] and "Nothing is added to out yet" in verdict["message"], (name, verdict)


def test_the_reference_is_not_importable(exercise):
    page = exercise
    verdict = check(page, REFERENCE_SOLUTION)
    assert not verdict["passed"] and "microgpt_floats" in verdict["message"], verdict
    result = page.evaluate(RUN_JS, "import microgpt_floats\n")
    assert not result["ok"] and "ModuleNotFoundError" in result["error"], result
    result = page.evaluate(RUN_JS, "import sys\nprint(sorted(n for n in sys.modules if 'floats' in n))\n")
    assert result["ok"] and "[]" in page.inner_text(".mgpt-ex__output"), result


def test_files_do_not_survive_a_job(exercise):
    page = exercise
    assert page.evaluate(RUN_JS, "open('/tmp/left.txt', 'w').write('x' * 1000)\nopen('mine.txt', 'w').write('y')\n")["ok"]
    result = page.evaluate(RUN_JS, "import os\nprint(os.path.exists('/tmp/left.txt'), os.path.exists('mine.txt'))\n")
    assert result["ok"] and "False False" in page.inner_text(".mgpt-ex__output"), result


def test_input_says_in_words_that_there_is_none(exercise):
    page = exercise
    result = page.evaluate(RUN_JS, "name = input('Your name? ')\n")
    assert not result["ok"] and "this exercise reads no input" in result["error"], result
    assert 'File "exercise.py", line 1' in result["error"] and "Errno 29" not in result["error"], result


def test_deep_recursion_shows_only_the_learners_frames(exercise):
    page = exercise
    result = page.evaluate(RUN_JS, "def down(n):\n    return down(n + 1)\n\ndown(0)\n")
    assert not result["ok"] and "RecursionError" in result["error"], result
    assert 'File "exercise.py", line 4, in <module>' in result["error"], result
    for inside in ("sandbox", "diagnosis", "/opt/", "/lib/python"):
        assert inside not in result["error"], (inside, result["error"])
    verdict = check(page, solution())
    assert verdict["passed"], verdict


def test_a_crash_is_said_in_words(exercise):
    page = exercise
    result = page.evaluate(RUN_JS, "import sys\nsys.setrecursionlimit(10**6)\ndef down(n):\n    return down(n + 1)\ndown(0)\n")
    said = result["error"]   # on a slow machine the 5 s limit may come first
    assert not result["ok"] and any(w in said for w in ("RecursionError", "Python crashed", "more than 5 seconds")), result
    assert page.evaluate(RUN_JS, "print('still here')\n")["ok"]


def test_every_job_gets_a_fresh_python(exercise):
    page = exercise
    page.evaluate(RUN_JS, "import builtins\nbuiltins.marker = 41\n")
    result = page.evaluate(RUN_JS, "import builtins\nprint(hasattr(builtins, 'marker'))\n")
    assert result["ok"] and "False" in page.inner_text(".mgpt-ex__output"), result
