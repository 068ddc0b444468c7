"""The microgpt listing at the foot of the page is built once Python is ready, or when the reader comes near it.

On a 2-core laptop, building the listing of microgpt.py (and the layout of the whole
page it forces) competes with the exercise's Python while it starts
(js/microgpt/python_first.js); the listing waits for it unless the reader
scrolls to the listing first.
"""
from __future__ import annotations

import pytest

from tests.browser.microgpt.test_exercise_page import WAIT_EXERCISE_JS
from tests.browser.microgpt.test_search_after_python import hold_python

pytestmark = pytest.mark.browser

# When the listing's first line is put into the page (runs before the page's own scripts).
RECORD_LISTING = """(() => {
  window.mhaListingAt = null;
  new MutationObserver((changes, observer) => {
    if (document.querySelector('.mgpt-src__line')) {
      window.mhaListingAt = performance.now();
      observer.disconnect();
    }
  }).observe(document, { childList: true, subtree: true });
})();"""
LISTING = "[data-mha-widget='microgpt-source']"


def test_the_listing_is_built_once_python_is_ready(make_page, base_url):
    page, _ = make_page(init_script=RECORD_LISTING, viewport={"width": 1280, "height": 720})
    page.goto(base_url + "microgpt/")
    ready_at = page.evaluate(WAIT_EXERCISE_JS)["readyAt"]
    page.wait_for_function("() => window.mhaListingAt !== null")
    assert page.evaluate("() => window.mhaListingAt") >= ready_at   # not a moment before Python was ready
    assert page.locator(f"{LISTING} .mgpt-src__line--locked").count() == 4


def test_scrolling_to_the_listing_builds_it_at_once(make_page, base_url):
    page, _ = make_page(init_script=RECORD_LISTING, viewport={"width": 1280, "height": 720})
    release = hold_python(page)
    page.goto(base_url + "microgpt/")
    page.wait_for_function("() => !!window.mhaExercise")
    assert page.evaluate("() => window.mhaListingAt") is None
    page.locator(LISTING).scroll_into_view_if_needed()
    page.wait_for_selector(f"{LISTING} .mgpt-src__line")
    assert page.evaluate("() => document.querySelector('.mgpt-ex__status').dataset.phase") == "loading"
    release()
    page.evaluate(WAIT_EXERCISE_JS)   # and Python still starts
