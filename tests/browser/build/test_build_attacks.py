"""The microgpt exercise's integrity attacks, run on the build exercise: the same list, the same results.

Each attack is submitted in front of a wrong ``project`` (its bias left out), which
must not pass; then the correct solution must pass in the next fresh worker, so
nothing an attack did outlives its job. The list is microgpt's own
(tests/browser/microgpt/test_exercise_attacks.py ATTACKS), plus one aimed at this
exercise's checks.
"""

from __future__ import annotations

import pytest

from tests.browser.build.test_build_page import CHECK_JS, open_page
from tests.browser.microgpt.test_exercise_attacks import ATTACKS
from tests.pyodide.test_build_exercise import MISTAKES, solution

pytestmark = pytest.mark.browser

OWN = {
    "import_the_checks": "import exercise_checks\n",
    "read_the_checks": "print(open('/opt/reference/exercise.py').read())\n",
}


@pytest.fixture(scope="module")
def build_page(browser, servers):
    from tests.browser_util import PageWatch

    context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
    page = context.new_page()
    # The deep-recursion attack overflows the browser's stack: Pyodide says so on the console, and that
    # job's worker is thrown away like any other (as on the microgpt page).
    watch = PageWatch(
        page,
        allow_console=(
            r"Pyodide has suffered a fatal error",
            r"The cause of the fatal error",
            r"Maximum call stack size exceeded",
        ),
    )
    open_page(page, servers["isolated"])
    yield page
    watch.check()
    context.close()


@pytest.mark.parametrize("name", [*ATTACKS, *OWN])
def test_an_attack_in_front_of_a_wrong_answer_fails_and_leaves_nothing_behind(build_page, name):
    attack = {**ATTACKS, **OWN}[name]
    _, make, _, _ = MISTAKES["project_no_bias"]
    verdict = build_page.evaluate(CHECK_JS, ["project", attack + make()])
    assert not verdict["passed"], (name, verdict)
    verdict = build_page.evaluate(CHECK_JS, ["project", solution()])
    assert verdict["passed"], (name, verdict)
