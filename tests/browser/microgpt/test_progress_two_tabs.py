"""Two tabs of the microgpt page share one stored progress: a solved exercise stays solved.

Tab A solves the exercise; tab B, open since before, then saves its own code
(what its editor does after every change). B used to write its stale copy of
the progress, and the stored exercise went back to "not solved yet".
"""

from __future__ import annotations

import pytest

from tests.browser_util import PageWatch

pytestmark = pytest.mark.browser

PROGRESS_JS = "() => import(new URL('../js/microgpt/progress.js', location.href).href)"
SOLVE_JS = f"""async () => {{
  const progress = await ({PROGRESS_JS})();
  progress.updateProgress({{ solved: true, solvedCode: 'def multi_head(): pass  # A', failedChecks: 2 }}, 'solved');
}}"""
EDIT_JS = f"""async () => {{
  const progress = await ({PROGRESS_JS})();
  progress.updateProgress({{ code: '# what tab B typed' }}, 'code');
}}"""
STORED_JS = "() => JSON.parse(localStorage.getItem('mha-microgpt-progress'))"


def test_a_solved_exercise_stays_solved_whatever_another_tab_writes(browser, base_url):
    context = browser.new_context(service_workers="block")
    try:
        tabs = []
        for _ in range(2):
            page = context.new_page()
            tabs.append((page, PageWatch(page)))
            page.set_default_timeout(60000)
            page.goto(base_url + "microgpt/")
            page.wait_for_selector(".mgpt-progress__summary")
        (a, watch_a), (b, watch_b) = tabs
        # B reads the progress before A solves (its widgets did on mounting).
        assert "not solved yet" in b.inner_text(".mgpt-progress__summary")
        a.evaluate(SOLVE_JS)
        # The browser passes A's write on to B's storage (a moment later, in another process).
        b.wait_for_function("() => JSON.parse(localStorage.getItem('mha-microgpt-progress') || '{}').solved === true")
        b.evaluate(EDIT_JS)
        stored = b.evaluate(STORED_JS)
        assert stored["solved"] is True and stored["code"] == "# what tab B typed", stored
        assert stored["solvedCode"].endswith("# A") and stored["failedChecks"] == 2, stored
        # B says so too, without a reload.
        b.wait_for_function(
            "() => /Exercise: solved/.test(document.querySelector('.mgpt-progress__summary').textContent)"
        )
        # Clearing stays possible: then it is not solved in either tab.
        a.click("[data-mha-widget=microgpt-progress] button")
        b.wait_for_function("() => localStorage.getItem('mha-microgpt-progress') === null")
        b.evaluate(EDIT_JS)
        assert b.evaluate(STORED_JS)["solved"] is False
        watch_a.check()
        watch_b.check()
    finally:
        context.close()
