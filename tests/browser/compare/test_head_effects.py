"""What each head did to one prediction, in the browser: the compare inspector's bars and page 5's.

The compare inspector measures them from the live model (site_src/js/compare/head_effects.js); page 5 draws
them at build time from ``page_data.json``'s ``running`` part. On the lesson's sentence both show the
pipeline's numbers: the four-head model's guess with all heads and with each head switched off.
"""

from __future__ import annotations

import re

import pytest

from tests.browser_util import open_compare

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("require_models")]


def _bars(figure) -> list[tuple[str, float]]:
    items = figure.locator(".mha-effect__bars li")
    out = []
    for i in range(items.count()):
        item = items.nth(i)
        p = float(re.match(r"([\d.]+)%", item.locator(".mha-effect__p").inner_text()).group(1))
        out.append((item.locator(".mha-effect__label").inner_text(), p))
    return out


def _expected(running) -> list[tuple[str, float]]:
    return [
        ("all heads", round(100 * running["p_guess"], 1)),
        *((f"without head {w['head']}", round(100 * w["p_guess"], 1)) for w in running["without"]),
    ]


def test_compare_inspector_shows_each_heads_effect_on_the_lessons_sentence(make_page, base_url, load_asset):
    running = load_asset("page_data.json")["running"]
    page, watch = make_page()
    state = open_compare(page, base_url, "?backend=wasm", timeout_ms=90000)
    assert state["ok"], state
    page.get_by_role("button", name="Use the lesson's sentence").click()
    assert page.locator("#mha-compare-prompt").input_value() == running["sentence"]
    page.locator("#mha-compare-tokens").fill("2")
    page.evaluate("() => window.mhaCompare.run()")
    page.locator(".mha-col[data-model='four_heads'] .mha-token[data-step='0']").click()
    block = page.locator(".mha-knock__model[data-model='four_heads']")
    block.wait_for()
    page.wait_for_function(
        "() => document.querySelector(\".mha-knock__model[data-model='four_heads']\").dataset.effects === 'shown'"
    )
    figure = block.locator(".mha-effect")
    assert figure.locator(".mha-effect__title").inner_text() == f"Probability of “{running['guess']}”"
    got, want = _bars(figure), _expected(running)
    assert [g[0] for g in got] == [w[0] for w in want]
    for (_, g), (_, w) in zip(got, want):
        assert abs(g - w) <= 0.1 + 1e-9, (got, want)  # one rounding step of the shown 0.1 %
    for w in running["without"]:
        said = f"without head {w['head']} it guesses “{w['guess']}” instead" in figure.inner_text().lower()
        assert said == w["changed"], w
    # No bars for the one-head model: with one head, "without it" is the no-attention case, not a head's share.
    assert page.locator(".mha-knock__model[data-model='one_head'] .mha-effect").count() == 0
    watch.check()


def test_page_5_bars_show_the_running_sentence(make_page, base_url, load_asset):
    running = load_asset("page_data.json")["running"]
    page, watch = make_page(viewport={"width": 390, "height": 844})
    page.goto(base_url + "lesson/5-results/")
    figure = page.locator("#fig-head-effects")
    # The build formats the page data's values with Python's ".1%": exactly those.
    want = [
        (label, float(format(p, ".1%").rstrip("%")))
        for label, p in [
            ("all heads", running["p_guess"]),
            *((f"without head {w['head']}", w["p_guess"]) for w in running["without"]),
        ]
    ]
    assert _bars(figure) == want
    assert running["sentence"] in figure.locator(".mha-effect__title").inner_text()
    # On a phone every bar's row fits the screen.
    for i in range(figure.locator(".mha-effect__bars li").count()):
        box = figure.locator(".mha-effect__bars li").nth(i).bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    watch.check()
