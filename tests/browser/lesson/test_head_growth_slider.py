"""Page 5's training slider (site_src/js/lesson/head_growth.js) in headless Chromium.

The slider shows each snapshot of wasm_assets/head_growth.json: the attention
table equals the file's weights, the knock-out figure marks the snapshot, and
the keyboard moves it.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

PAGE5 = "lesson/5-results/"


def test_slider_scrubs_through_the_snapshots(make_page, base_url, load_asset):
    data = load_asset("head_growth.json")
    page, _ = make_page(viewport={"width": 390, "height": 844}, color_scheme="dark")
    page.set_default_timeout(30000)
    page.goto(base_url + PAGE5)
    root = page.locator("[data-mha-widget='head_growth']")
    slider = root.locator("[data-hg='slider']")
    slider.wait_for()
    assert root.get_attribute("data-snapshot") == "0"
    # The random start says its leans are chance, and how large chance is there.
    first = data["snapshots"][0]
    assert first["update"] == 0
    chance = max(h["share"][h["signature"]] - first["uniform"][h["signature"]] for h in first["atlas"])
    start = root.locator("[data-hg='start']")
    assert "random start" in start.inner_text() and f"{100 * chance:.1f} points" in start.inner_text()
    last = len(data["snapshots"]) - 1
    slider.focus()
    page.keyboard.press("End")
    assert root.get_attribute("data-snapshot") == str(last)
    assert not start.is_visible()
    # A later lean no larger than the random start's largest is said to be no more than chance.
    snap = data["snapshots"][last]
    within = [h["share"][h["signature"]] - snap["uniform"][h["signature"]] <= chance for h in snap["atlas"]]
    flags = root.locator("[data-hg='roles'] li").evaluate_all("items => items.map((li) => li.dataset.withinChance)")
    assert flags == [str(w).lower() for w in within]
    for item, w in zip(root.locator("[data-hg='roles'] li").all(), within):
        assert ("no more than chance" in item.inner_text()) == w
    assert page.locator("#fig-head-growth").get_attribute("data-active-snapshot") == str(last)
    page.keyboard.press("ArrowLeft")
    assert root.get_attribute("data-snapshot") == str(last - 1)
    page.keyboard.press("ArrowRight")
    snap = data["snapshots"][last]
    assert f"update {snap['update']:,}" in root.locator("[data-hg='update']").inner_text()
    for p_index in (0, len(data["prompts"]) - 1):
        root.locator("[data-hg='prompt']").select_option(str(p_index))
        want = snap["prompts"][p_index]["weights"]
        got = root.locator("td[data-weight]").evaluate_all(
            "cells => cells.map((c) => [Number(c.dataset.head), Number(c.dataset.slot), Number(c.dataset.weight)])"
        )
        assert sorted(map(tuple, got)) == sorted((h + 1, j, w) for h, row in enumerate(want) for j, w in enumerate(row))
    roles = root.locator("[data-hg='roles'] li")
    assert roles.count() == len(snap["atlas"])
    ko = snap["knockout"]["without_1"]["test_perplexity"]
    assert f"{ko:.2f}" in roles.first.inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
