"""Page 1's query-and-keys picture (site_src/js/lesson/query_keys.js): drag or key an arrow, the numbers follow.

The arrows start at the worksheet's head-1 query of the last receiver and the
keys of the sources the page names; the table (the picture's text alternative)
shows each dot product and the softmax weights, recomputed here in Python from
the arrows' positions after every move (tolerances stated where they are used).
"""

from __future__ import annotations

import math

import pytest

pytestmark = pytest.mark.browser

PAGE = "lesson/1-why-more-heads/"
# data-weights holds each weight to 4 decimals (half a unit: 5e-5).
WEIGHTS_4DP = 1e-4


def _softmax(xs):
    top = max(xs)
    e = [math.exp(x - top) for x in xs]
    return [x / sum(e) for x in e]


def _state(page):
    return page.evaluate("""() => {
      const root = document.querySelector('[data-mha-widget=query_keys]');
      const pos = (h) => [Number(h.getAttribute('cx')), Number(h.getAttribute('cy'))];
      return {
        weights: root.dataset.weights.split(',').map(Number),
        dots: [...root.querySelectorAll('tbody tr td:nth-child(3)')].map((td) => Number(td.dataset.value)),
        labels: [...root.querySelectorAll('.mha-qk__handle')].map((h) => h.getAttribute('aria-label')),
        query: pos(root.querySelector('.mha-qk__handle--query')),
        summary: root.querySelector('.mha-qk__summary').textContent,
      };
    }""")


def _vectors(labels):
    out = {}
    for label in labels:
        name, xy = label.rsplit(": ", 1)
        x, y = (float(p.split()[1].replace("\u2212", "-")) for p in xy.split(", "))
        out[name] = (x, y)
    return out


def _check_numbers(state):
    v = _vectors(state["labels"])
    q = next(val for name, val in v.items() if name.startswith("query"))
    keys = [val for name, val in v.items() if name.startswith("key")]
    dots = [q[0] * k[0] + q[1] * k[1] for k in reversed(keys)]  # handles are drawn query last, keys reversed
    # The labels round to 2 decimals; the dot product of two such vectors differs by at most ~0.02.
    assert sorted(state["dots"]) == pytest.approx(sorted(dots), abs=0.05)
    assert sum(state["weights"]) == pytest.approx(1, abs=1e-3)
    assert state["weights"] == pytest.approx(_softmax(state["dots"]), abs=WEIGHTS_4DP)


def test_starts_at_the_worksheet_and_follows_the_keyboard(make_page, base_url, load_asset):
    ws = load_asset("worksheet.json")
    page, watch = make_page(viewport={"width": 1280, "height": 900})
    page.goto(base_url + PAGE)
    root = page.locator("[data-mha-widget=query_keys][data-ready=true]")
    root.wait_for()
    start = _state(page)
    q = ws["Q"][0][len(ws["tokens"]) - 1]
    keys = [ws["K"][0][j] for j in (1, 5, 6, 7)]
    expected = _softmax([q[0] * k[0] + q[1] * k[1] for k in keys])
    assert start["weights"] == pytest.approx(expected, abs=0.01)
    assert "river" in start["summary"]  # the worksheet's head 1 reads most from river
    _check_numbers(start)

    # Keyboard only: Tab onto the query's tip, move it right with Shift+ArrowRight.
    handle = root.locator(".mha-qk__handle--query")
    handle.focus()
    for _ in range(14):  # 7 units: from x = -2.47 past the edge at 3.5
        page.keyboard.press("Shift+ArrowRight")
    moved = _state(page)
    assert moved["weights"] != start["weights"]
    assert moved["query"][0] > start["query"][0]
    assert "x 3.5" in handle.get_attribute("aria-label")  # clamped at the plane's edge
    _check_numbers(moved)
    # Pointing the query at "and" (the key furthest right and up) hands it the most weight.
    for _ in range(10):
        page.keyboard.press("Shift+ArrowUp")
    assert "and (7)" in _state(page)["summary"]
    root.locator(".mha-qk__reset").click()
    assert _state(page)["weights"] == start["weights"]
    watch.check()


@pytest.mark.parametrize("width", [1280, 390])
def test_dragging_a_key_changes_the_weights(make_page, base_url, width):
    page, watch = make_page(viewport={"width": width, "height": 900}, has_touch=False)
    page.goto(base_url + PAGE)
    root = page.locator("[data-mha-widget=query_keys][data-ready=true]")
    root.wait_for()
    root.scroll_into_view_if_needed()
    start = _state(page)
    key = root.locator(".mha-qk__handle--key").last  # the first source's key (drawn last of the keys)
    box = key.bounding_box()
    query = root.locator(".mha-qk__handle--query").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    # Drag the key onto the query's direction: its weight must become the largest.
    tx, ty = query["x"] + query["width"] / 2, query["y"] + query["height"] / 2
    page.mouse.move(tx, ty, steps=8)
    page.mouse.up()
    after = _state(page)
    assert after["weights"] != start["weights"]
    assert after["weights"][0] == max(after["weights"]), after
    _check_numbers(after)
    watch.check()
