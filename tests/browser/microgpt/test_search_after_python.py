"""On the exercise page the theme's search worker starts once Python is ready (js/microgpt/later_search.js).

Material builds its search index in a worker as the page loads, which on a
2-core laptop slows the exercise's own start; the page hands the theme a
stand-in and creates the real worker when Python is ready, or at once when the
reader goes to the search box first. Search works either way.
"""

from __future__ import annotations

import pytest

from tests.browser.microgpt.test_exercise_page import WAIT_EXERCISE_JS

pytestmark = pytest.mark.browser

# Records every worker the page really creates (runs before the page's own scripts).
RECORD_WORKERS = """(() => {
  const Real = window.Worker;
  window.mhaWorkersMade = [];
  window.Worker = function (url, options) {
    window.mhaWorkersMade.push({ url: String(url), at: performance.now() });
    return Reflect.construct(Real, [url, options], new.target);
  };
  window.Worker.prototype = Real.prototype;
})();"""
SEARCH_MADE = "() => (window.mhaWorkersMade || []).filter((w) => w.url.includes('/workers/search.')).map((w) => w.at)"


def hold_python(page):
    """Holds Python's WebAssembly back (Python cannot be ready meanwhile); returns what lets it through."""
    held = []
    page.route("**/vendor/pyodide/**/pyodide.asm.wasm", lambda route: held.append(route))

    def release():
        for route in held:
            route.continue_()

    return release


def search_for(page, words: str) -> int:
    """Types `words` into the theme's search box; the number of results it lists."""
    page.fill(".md-search__input", words)  # (the header's search box, shown at the default 1280 px)
    page.wait_for_selector(".md-search-result__item", timeout=60000)
    return page.locator(".md-search-result__item").count()


def test_the_search_worker_starts_when_python_is_ready_and_search_works(make_page, base_url):
    page, _ = make_page(init_script=RECORD_WORKERS)
    page.goto(base_url + "microgpt/")
    ready_at = page.evaluate(WAIT_EXERCISE_JS)["readyAt"]
    page.wait_for_function(f"() => ({SEARCH_MADE})().length > 0")
    made = page.evaluate(SEARCH_MADE)
    assert len(made) == 1, made
    assert made[0] >= ready_at, (made, ready_at)  # not a moment before Python was ready
    assert search_for(page, "attention") > 0


def test_going_to_the_search_box_first_starts_it_at_once(make_page, base_url):
    page, _ = make_page(init_script=RECORD_WORKERS)
    release = hold_python(page)
    page.goto(base_url + "microgpt/")
    page.wait_for_function("() => !!window.mhaExercise")
    assert search_for(page, "attention") > 0
    made = page.evaluate(SEARCH_MADE)
    assert len(made) == 1, made
    assert page.evaluate("() => document.querySelector('.mgpt-ex__status').dataset.phase") == "loading"
    release()
    page.evaluate(WAIT_EXERCISE_JS)  # and Python still starts
