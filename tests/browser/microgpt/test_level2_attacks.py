"""The shared integrity attacks, run on microgpt's Level 2: the same list, the same results.

Each attack is submitted in front of a wrong whole function (the heads added up
instead of glued), which must not pass; then the correct function must pass in
the next fresh worker, so nothing an attack did outlives its job. The list is the
one Level 1 and the build exercise run (tests/browser/microgpt/test_exercise_attacks.py
ATTACKS), plus those aimed at Level 2's own files: its checks and microgpt's
arithmetic are written for Python only after the numbers are in.
"""

from __future__ import annotations

import pytest

from tests.browser.microgpt.test_exercise_attacks import ATTACKS
from tests.browser.microgpt.test_exercise_page import open_microgpt
from tests.browser_util import PageWatch
from tests.pyodide.test_microgpt_level2 import LEVEL2, solution

pytestmark = pytest.mark.browser

LEVEL2_CHECK_JS = "(source) => window.mhaExercise.level2.check(source)"
OWN = {
    "import_the_checks": "import microgpt_multi_head\n",
    "read_the_checks": "print(open('/opt/reference/exercise.py').read())\n",
    "read_the_arithmetic": "print(open('/opt/reference/microgpt_floats.py').read())\n",
    "answer_from_the_checker": (
        "import diagnosis\n\n\ndef multi_head(q, keys, values):\n"
        "    diagnosis._use_reference()\n"
        "    return diagnosis.floats.multi_head(q, keys, values, 4)[0]\n"
    ),
}


@pytest.fixture(scope="module")
def level2_page(browser, servers):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
    page = context.new_page()
    # The deep-recursion attack overflows the browser's stack: Pyodide says so on the console, and that
    # job's worker is thrown away like any other (as on Level 1).
    watch = PageWatch(
        page,
        allow_console=(
            r"Pyodide has suffered a fatal error",
            r"The cause of the fatal error",
            r"Maximum call stack size exceeded",
        ),
    )
    open_microgpt(page, servers["isolated"])
    page.evaluate("() => window.mhaExercise.level2.ready")
    yield page
    watch.check()
    context.close()


@pytest.mark.parametrize("name", [*ATTACKS, *OWN])
def test_an_attack_in_front_of_a_wrong_answer_fails_and_leaves_nothing_behind(level2_page, name):
    attack = {**ATTACKS, **OWN}[name]
    # (The checker's own answer is a whole multi_head: it must fail on its own.)
    wrong = attack if name == "answer_from_the_checker" else attack + LEVEL2["heads_summed"][0]()
    verdict = level2_page.evaluate(LEVEL2_CHECK_JS, wrong)
    assert not verdict["passed"], (name, verdict)
    verdict = level2_page.evaluate(LEVEL2_CHECK_JS, solution())
    assert verdict["passed"], (name, verdict)
