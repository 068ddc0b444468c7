"""The lesson's generated figures in headless Chromium: visible, inside the page, light and dark, phone and desktop.

Uses the shared fixtures (built site, local server, pages that fail on console
errors and on requests to other origins).
"""

from __future__ import annotations

import pytest

from tests.browser_util import WIDGETS_DRAWN

pytestmark = pytest.mark.browser

PAGES = {
    "lesson/1-why-more-heads/": 5,
    "lesson/2-multihead-operation/": 1,
    "lesson/4-model-training-generation/": 2,
    "lesson/5-results/": 2,
    "lesson/how-measured/": 6,  # the fine print's figures, page 3's tokenizers among them
}


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("path", PAGES)
def test_figures_are_visible_and_fit(make_page, base_url, path, width, scheme):
    page, watch = make_page(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page.set_default_timeout(20000)
    page.goto(base_url + path)
    page.wait_for_load_state("networkidle")
    expected = "slate" if scheme == "dark" else "default"
    assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == expected
    # Some figures sit behind "Go deeper" doors: every door open, every figure is checked.
    page.evaluate("() => document.querySelectorAll('details.mha-deeper').forEach((d) => { d.open = true; })")
    figures = page.locator("figure.mha-fig")
    assert figures.count() >= PAGES[path]
    for k in range(figures.count()):
        fig = figures.nth(k)
        name = fig.get_attribute("data-fig")
        fig.scroll_into_view_if_needed()
        svg = fig.locator("svg.mha-fig__svg")
        if svg.count() == 0:  # a figure that is a table (page 5's every-task summary)
            assert fig.locator("table").first.is_visible() and fig.locator("figcaption").is_visible(), name
            continue
        assert svg.is_visible() and fig.locator("figcaption").is_visible(), name
        box = svg.bounding_box()
        # A figure whose text would shrink below 11 px on a phone keeps its size and scrolls sideways in
        # its own box (.mha-fig__scroll, overflow-x: auto); that box, not the drawing, must fit the page.
        frame = fig.locator(".mha-fig__scroll").bounding_box() or box
        assert frame["x"] >= 0 and frame["x"] + frame["width"] <= width + 0.5, f"{name} leaves the page: {frame}"
        # ...and a drawing whose floor fits the screen must not be cut off by its own box (a reviewer read
        # page 2's 390 px-floor figure, 32 px too wide for the column at 390 px, as clipped).
        hidden = fig.evaluate("""f => { const s = f.querySelector('.mha-fig__scroll'); if (!s) return 0;
            const floor = parseFloat(f.querySelector('svg').style.minWidth) || 0;
            return floor <= window.innerWidth ? s.scrollWidth - s.clientWidth : 0; }""")
        assert hidden <= 1, f"{name}: {hidden}px of the drawing hidden in its scroll box at {width}px"
        assert box["width"] >= min(300, width - 40), f"{name} is only {box['width']}px wide"
        # text is drawn in the page's foreground colour, so it follows light and dark mode
        colours = svg.evaluate("""s => {
            const t = s.querySelector('text.mha-fig__label:not([class*="-text"]), text:not([class])'); const bg = getComputedStyle(document.body).backgroundColor;
            return t ? [getComputedStyle(t).fill, getComputedStyle(s).color, bg] : null; }""")
        if colours is not None:  # a figure whose every label is head-tinted has no plain label to check
            assert colours[0] == colours[1] and colours[0] != colours[2], f"{name}: text {colours[0]} on {colours[2]}"
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 1, f"{path} is {overflow}px wider than the window"
    watch.check()


def test_head_explorer_highlights_its_head_in_the_flow(make_page, base_url):
    page, watch = make_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(20000)
    page.goto(base_url + "lesson/2-multihead-operation/")
    fig = page.locator('figure[data-fig="operation-flow"]')
    page.wait_for_function("document.querySelector('figure[data-fig=\"operation-flow\"]').dataset.activeHead === '0'")
    lanes = fig.locator(".mha-lane")
    assert float(lanes.nth(0).evaluate("g => getComputedStyle(g).opacity")) == 1
    page.locator(".mha-hx label", has_text="Head 2").click()
    page.wait_for_function("document.querySelector('figure[data-fig=\"operation-flow\"]').dataset.activeHead === '1'")
    page.wait_for_function("""() => {
        const l = document.querySelectorAll('figure[data-fig="operation-flow"] .mha-lane');
        return getComputedStyle(l[1]).opacity === '1' && Number(getComputedStyle(l[0]).opacity) < 1; }""")
    assert "head 2" in fig.locator(".mha-fig__status").inner_text()
    watch.check()


def test_model_map_boxes_lead_to_their_stage_and_back(make_page, base_url):
    page, watch = make_page(viewport={"width": 390, "height": 844})
    page.set_default_timeout(20000)
    page.goto(base_url + "lesson/4-model-training-generation/")
    # Clicked once the page has settled (its widgets drawn, its fonts in): on a busy machine a click
    # sent while the page still moved missed the box once (CI-like full run, stop 42).
    page.wait_for_function(WIDGETS_DRAWN)
    page.evaluate("document.fonts.ready.then(() => true)")
    page.locator("#map-mask").click()
    # A box leads to its stage's real numbers: the "Go deeper" door that holds them opens (a
    # reviewer clicked a box and landed on a one-line list item, the detail still shut away).
    page.wait_for_function("location.hash === '#stage-mask-detail'")
    page.wait_for_function("document.querySelector('#stage-mask-detail').closest('details').open")
    page.locator("#stage-mask-detail").wait_for(state="visible")
    # In view once the jump settles: the door's own scroll comes a frame after the browser's jump,
    # and the top may sit a fraction of a pixel above 0.
    page.wait_for_function("""() => { const r = document.querySelector('#stage-mask-detail').getBoundingClientRect();
                                      return r.top > -1 && r.top < innerHeight; }""")
    page.locator('.mha-maplink a[href$="#map-mask"]').click()  # Material makes the href absolute
    page.wait_for_function("location.hash === '#map-mask'")
    # keyboard: a box is a link that takes the focus and follows Enter
    page.focus("#map-scores")
    assert page.evaluate("document.activeElement.id") == "map-scores"
    page.keyboard.press("Enter")
    page.wait_for_function("location.hash === '#stage-scores-detail'")
    watch.check()
