"""The microgpt page's widgets below the exercise's first screen wait for its Python, which the learner came for.

On a 2-core laptop, building the Explore charts two screens down and the listing
of microgpt.py at the foot of the page (and the layout of the whole page each
forces) competes with the exercise's Python while it starts
(js/microgpt/python_first.js): each waits for it unless the reader scrolls to
the widget first.
"""

from __future__ import annotations

import json

import pytest

from tests.browser.microgpt.test_exercise_page import WAIT_EXERCISE_JS
from tests.browser.microgpt.test_search_after_python import hold_python

pytestmark = pytest.mark.browser

# Each widget, and an element it puts into the page only once it is built.
WIDGETS = {
    "listing": ("[data-mha-widget='microgpt-source']", ".mgpt-src__line"),
    "explore": ("[data-mha-widget='microgpt-explore']", "[data-chart='heads'] .mgpt-bars__col"),
}
# When each widget's first built element is put into the page (runs before the page's own scripts).
RECORD_BUILT = """((widgets) => {
  window.mhaBuiltAt = {};
  new MutationObserver(() => {
    for (const [name, [root, part]] of Object.entries(widgets)) {
      if (!(name in window.mhaBuiltAt) && document.querySelector(`${root} ${part}`)) window.mhaBuiltAt[name] = performance.now();
    }
  }).observe(document, { childList: true, subtree: true });
})(%s);"""


def _recording(make_page):
    return make_page(init_script=RECORD_BUILT % json.dumps(WIDGETS), viewport={"width": 1280, "height": 720})


def test_the_widgets_are_built_once_python_is_ready(make_page, base_url):
    page, _ = _recording(make_page)
    page.goto(base_url + "microgpt/")
    ready_at = page.evaluate(WAIT_EXERCISE_JS)["readyAt"]
    page.wait_for_function(f"() => Object.keys(window.mhaBuiltAt).length === {len(WIDGETS)}")
    built = page.evaluate("() => window.mhaBuiltAt")
    assert all(at >= ready_at for at in built.values()), (ready_at, built)  # not a moment before Python was ready
    assert page.locator(f"{WIDGETS['listing'][0]} .mgpt-src__line--locked").count() == 4
    assert page.locator(f"{WIDGETS['explore'][0]} [data-chart='heads'] .mgpt-bars__col").count() == 27


@pytest.mark.parametrize("widget", sorted(WIDGETS))
def test_scrolling_to_a_widget_builds_it_at_once(make_page, base_url, widget):
    root, part = WIDGETS[widget]
    page, _ = _recording(make_page)
    release = hold_python(page)
    page.goto(base_url + "microgpt/")
    page.wait_for_function("() => !!window.mhaExercise")
    assert widget not in page.evaluate("() => window.mhaBuiltAt")
    page.locator(root).scroll_into_view_if_needed()
    page.wait_for_selector(f"{root} {part}")
    assert page.evaluate("() => document.querySelector('.mgpt-ex__status').dataset.phase") == "loading"
    release()
    page.evaluate(WAIT_EXERCISE_JS)  # and Python still starts
