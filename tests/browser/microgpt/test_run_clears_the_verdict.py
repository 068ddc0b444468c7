"""A verdict belongs to the code it judged: a Run after a Check takes the old verdict away."""

from __future__ import annotations

import pytest

from tests.browser.microgpt.test_exercise_page import open_microgpt, timed_check
from tests.pyodide.test_checker_without_browser import solution, starter

pytestmark = pytest.mark.browser


def test_a_run_after_a_check_says_it_did_not_check(make_page, servers):
    page, _ = make_page()
    open_microgpt(page, servers["isolated"])
    verdict, _ = timed_check(page, starter())
    assert not verdict["passed"]
    box = page.locator(".mgpt-ex__verdict")
    assert "Not yet" in box.inner_text() or box.get_attribute("data-passed") == "false"
    page.evaluate("(s) => window.mhaExercise.run(s)", solution())
    assert box.get_attribute("data-passed") is None
    assert "press Check" in box.inner_text()
