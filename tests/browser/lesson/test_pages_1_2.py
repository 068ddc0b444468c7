"""Lesson pages 1–2 in headless Chromium: the two-source toy and the head explorer.

Uses the shared fixtures of conftest.py (built site, local server, watched
pages that fail on console errors and on requests to other origins).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PAGE1 = "lesson/1-why-more-heads/"
PAGE2 = "lesson/2-multihead-operation/"

pytestmark = pytest.mark.browser


def _fmt(x: float) -> str:
    """The widgets' number format: at most two decimals, no trailing zeros, a real minus sign."""
    s = f"{round(x + 0.0, 2):.2f}".rstrip("0").rstrip(".")
    if s in ("-0", ""):
        s = "0"
    return s.replace("-", "\u2212")


def _fixed(x: float) -> str:
    s = f"{x:.2f}"
    if s == "-0.00":
        s = "0.00"
    return s.replace("-", "\u2212")


def _worksheet() -> dict:
    return json.loads((ROOT / "wasm_assets" / "worksheet.json").read_text())


def _open(make_page, base_url, path, **context):
    page, watch = make_page(**context)
    page.set_default_timeout(20000)
    page.goto(base_url + path)
    return page, watch


def test_page1_two_source_slider(make_page, base_url):
    page, _ = _open(make_page, base_url, PAGE1)
    # The calculator is the message plane's arithmetic, behind a "Go deeper" door: open it.
    page.locator("details.mha-deeper:has([data-mha-widget='two_source']) > summary").click()
    page.wait_for_selector(".mha-ts output[data-ts='one-head']")
    one = page.locator(".mha-ts output[data-ts='one-head']")
    two = page.locator(".mha-ts output[data-ts='two-heads']")
    # The authored defaults, computed by the widget: 0.8 x [10, 1] + 0.2 x [2, 8] and the two-head pair.
    assert one.inner_text() == "One head\u2019s message: [8.4, 2.4]"
    assert two.inner_text() == "Two heads combined: [8.4, 6.6]"

    sliders = page.locator(".mha-ts input[type=range]")
    assert sliders.count() == 3
    for i in range(3):  # every slider has a visible label
        slider_id = sliders.nth(i).get_attribute("id")
        assert page.locator(f"label[for='{slider_id}']").inner_text().strip()

    river, fisher = [10, 1], [2, 8]
    # Keyboard: one step right on the one-head slider.
    sliders.nth(0).focus()
    page.keyboard.press("ArrowRight")
    w = float(sliders.nth(0).input_value())
    assert w == pytest.approx(0.85)
    expected = [w * r + (1 - w) * f for r, f in zip(river, fisher)]
    assert one.inner_text() == f"One head\u2019s message: [{_fmt(expected[0])}, {_fmt(expected[1])}]"
    assert json.loads(one.get_attribute("data-values")) == pytest.approx(expected)
    assert sliders.nth(0).get_attribute("aria-valuetext") == f"river {_fmt(w)}, fisherman {_fmt(1 - w)}"

    # The person head: two steps left, then the combined result uses both heads' own weights.
    sliders.nth(2).focus()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    ws_, wp = float(sliders.nth(1).input_value()), float(sliders.nth(2).input_value())
    assert (ws_, wp) == pytest.approx((0.8, 0.1))
    expected2 = [ws_ * river[0] + (1 - ws_) * fisher[0], wp * river[1] + (1 - wp) * fisher[1]]
    assert two.inner_text() == f"Two heads combined: [{_fmt(expected2[0])}, {_fmt(expected2[1])}]"
    assert page.locator("[data-ts='person-sum']").inner_text().endswith(f"= {_fmt(expected2[1])}")

    # Mounting the same root again changes nothing.
    page.evaluate("""async () => {
      const root = document.querySelector('[data-mha-widget="two_source"]');
      const mod = await import(new URL('js/lesson/two_source.js', document.baseURI.replace(/lesson\\/.*$/, '')).href);
      mod.mount(root); mod.mount(root);
    }""")
    assert page.locator(".mha-ts").count() == 1
    assert one.inner_text().startswith("One head\u2019s message: [" + _fmt(expected[0]))


def test_page2_worksheet_tables_match_json(make_page, base_url):
    ws = _worksheet()
    page, _ = _open(make_page, base_url, PAGE2)
    page.wait_for_selector("table[data-matrix='output']", state="attached")
    page.wait_for_function("document.querySelectorAll('table.mha-ws__matrix').length >= 20")
    # The complete worksheet sits behind a "Go deeper" door: open it, as a learner would.
    page.locator("details.mha-deeper:has(table[data-matrix='output']) > summary").click()
    assert page.locator(".mha-panel--error").count() == 0
    for h in range(2):
        cells = page.locator(f"table[data-matrix='A-{h + 1}'] tbody tr").nth(9).locator("td")
        assert cells.count() == 10
        for j in range(10):
            assert float(cells.nth(j).get_attribute("data-value")) == pytest.approx(ws["A"][h][9][j])
            assert cells.nth(j).inner_text() == _fixed(ws["A"][h][9][j])
        masked = page.locator(f"table[data-matrix='scores-{h + 1}'] td.mha-ws__masked")
        assert masked.count() == 45
    out_row = page.locator("table[data-matrix='output'] tbody tr").nth(9).locator("td")
    assert [out_row.nth(k).inner_text() for k in range(4)] == [_fixed(x) for x in ws["output"][9]]


def test_page2_head_explorer_keyboard(make_page, base_url):
    ws = _worksheet()
    page, _ = _open(make_page, base_url, PAGE2)
    page.wait_for_selector(".mha-hx [data-hx='table'] td[data-weight]")
    hx = page.locator("[data-mha-widget='head_explorer']")
    assert hx.get_attribute("data-receiver") == "9" and hx.get_attribute("data-head") == "0"

    def shown_weights():
        cells = page.locator(".mha-hx [data-hx='table'] td[data-weight]")
        return [cells.nth(k).inner_text() for k in range(cells.count())]

    assert shown_weights() == [_fixed(x) for x in ws["A"][0][9]]

    # Receiver: focus the checked radio (slot 9) and move one to the left with the keyboard.
    receiver = page.locator(".mha-hx__tokens input[type=radio]:checked")
    receiver.focus()
    page.keyboard.press("ArrowLeft")
    assert hx.get_attribute("data-receiver") == "8"
    # Head: Tab into the next group, then arrow to head 2.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.name").endswith("-head")
    page.keyboard.press("ArrowRight")
    assert hx.get_attribute("data-head") == "1"

    i, h = 8, 1
    expected = [_fixed(ws["A"][h][i][j]) for j in range(i + 1)]
    assert shown_weights() == expected
    masked = page.locator(".mha-hx [data-hx='table'] td.mha-hx__masked")
    assert masked.count() == 10 - (i + 1)
    strip = page.locator(".mha-hx [data-hx='strip'] .mha-hx__cell-weight")
    assert [strip.nth(j).inner_text() for j in range(i + 1)] == expected
    assert (
        page.locator(".mha-hx [data-hx='strip']")
        .get_attribute("aria-label")
        .startswith(f"Weights of head {h + 1} for receiver slot {i}:")
    )
    message = page.locator(".mha-hx [data-hx='message'] strong").inner_text()
    assert message == "Message h = [" + ", ".join(_fmt(x) for x in ws["H"][h][i]) + "]"
    summary = page.locator(".mha-hx [data-hx='summary']").inner_text()
    assert f"(slot {i}), head {h + 1}" in summary and "add up to 1" in summary
    # The viridis colour of the largest weight is the bright end of the map (text stays readable).
    assert (
        page.locator(".mha-hx [data-hx='table'] td[data-weight]")
        .first.evaluate("td => getComputedStyle(td).backgroundColor")
        .startswith("rgb(")
    )


@pytest.mark.parametrize("path", [PAGE1, PAGE2])
def test_pages_fit_a_phone_and_dark_mode(make_page, base_url, path):
    page, _ = _open(make_page, base_url, path, viewport={"width": 390, "height": 844}, color_scheme="dark")
    page.evaluate("() => document.querySelectorAll('details.mha-deeper').forEach((d) => { d.open = true; })")
    page.wait_for_selector(".mha-ts, .mha-hx")
    # Measure once every widget on the page has mounted (each root has content) and fonts are laid out.
    page.wait_for_function("""() => [...document.querySelectorAll('[data-mha-widget]')]
        .every((root) => root.childElementCount > 0)""")
    page.evaluate("() => document.fonts.ready.then(() => true)")
    assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == "slate"
    overflow = page.evaluate("document.documentElement.scrollWidth")
    assert overflow <= 390, f"the page is {overflow}px wide on a 390px phone"
    assert page.locator(".mha-panel--error").count() == 0
    # Check-yourself questions: the answer stays hidden until a choice is checked.
    quizzes = page.locator("[data-mha-widget='quiz']")
    assert quizzes.count() >= 1
    first = quizzes.first
    first.locator("form").wait_for()
    explanation = first.locator(".mha-quiz__explanation")
    assert not explanation.is_visible()
    # The options are shuffled at build time; the no-JavaScript answer line names the right letter.
    right = ord(first.locator(".mha-quiz__answer strong").text_content().split()[1][0]) - ord("A")
    first.locator("input[type=radio]").first.focus()
    for key in ["Space"] if right == 0 else ["ArrowDown"] * right:  # choose it with the keyboard
        page.keyboard.press(key)
    first.locator("button[type=submit]").focus()
    page.keyboard.press("Enter")
    assert explanation.is_visible()
    assert first.locator(".mha-quiz__feedback").get_attribute("data-result") == "correct"
