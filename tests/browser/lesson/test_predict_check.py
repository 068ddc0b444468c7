"""Page 2's predict-then-check (site_src/js/lesson/predict_check.js), driven by the keyboard.

The expected cells come from wasm_assets/worksheet.json, recomputed here in
Python from the worksheet's inputs (q, k, the scores, weights, values, the
joined messages and W_O), so the page's numbers and the file's must agree.
A right answer (rounded to 2 decimals, inside the page's stated tolerance of
0.01) is accepted; a typical slip gets the hint for its step, and a second
wrong answer shows the worked cell.
"""

from __future__ import annotations

import math

import pytest

pytestmark = pytest.mark.browser

PAGE = "lesson/2-multihead-operation/"
H, R, S = 0, 1, 0  # head 1, receiver 1, source 0 (the page's data- attributes)


def _cells(ws):
    q, k = ws["Q"][H][R], ws["K"][H][S]
    score = (q[0] * k[0] + q[1] * k[1]) / math.sqrt(ws["head_dim"])
    assert score == pytest.approx(ws["scores"][H][R][S], rel=1e-12)
    allowed = [j for j in range(len(ws["tokens"])) if ws["mask"][R][j] == 1]
    e = {j: math.exp(ws["scores"][H][R][j]) for j in allowed}
    weight = e[S] / sum(e.values())
    message = sum(ws["A"][H][R][j] * ws["V"][H][j][0] for j in allowed)
    output = sum(c * ws["W_O"][i][0] for i, c in enumerate(ws["concat"][R]))
    return {
        "score": score,
        "weight": weight,
        "message": message,
        "output": output,
        "dot": q[0] * k[0] + q[1] * k[1],
        "exp": e[S],
        "coord2": ws["H"][H][R][1],
        "row": sum(c * ws["W_O"][0][i] for i, c in enumerate(ws["concat"][R])),
    }


def _answer(page, step, text):
    form = page.locator(f".mha-pc__step[data-step={step}]")
    field = form.locator("input")
    field.fill("")
    field.focus()
    page.keyboard.type(text)
    page.keyboard.press("Enter")
    return form.locator(".mha-pc__feedback")


def test_right_answers_open_the_next_step(make_page, base_url, load_asset):
    cells = _cells(load_asset("worksheet.json"))
    page, watch = make_page(viewport={"width": 390, "height": 844})
    page.goto(base_url + PAGE)
    root = page.locator("[data-mha-widget=predict_check][data-ready=true]")
    root.wait_for()
    assert "within 0.01" in root.inner_text()
    for step in ("score", "weight", "message", "output"):
        assert page.locator(f".mha-pc__step[data-step={step}]").is_visible()
        fb = _answer(page, step, f"{cells[step]:.2f}".replace("-", "\u2212"))
        assert fb.get_attribute("data-result") == "correct", (step, fb.inner_text())
        assert f"{cells[step]:.3f}".replace("-", "\u2212") in fb.inner_text()
    assert root.get_attribute("data-done") == "true"
    watch.check()


@pytest.mark.parametrize(
    "step,slip,words",
    [
        ("score", "dot", "√2"),
        ("weight", "exp", "sum of the exponentials"),
        ("message", "coord2", "coordinate 2"),
        ("output", "row", "column 1"),
    ],
)
def test_a_slip_names_its_step_then_the_worked_cell(make_page, base_url, load_asset, step, slip, words):
    cells = _cells(load_asset("worksheet.json"))
    page, watch = make_page()
    page.goto(base_url + PAGE)
    page.locator("[data-mha-widget=predict_check][data-ready=true]").wait_for()
    order = ["score", "weight", "message", "output"]
    for earlier in order[: order.index(step)]:  # open the step with "Show the worked cell"
        page.locator(f".mha-pc__step[data-step={earlier}] .mha-pc__show").click()
    form = page.locator(f".mha-pc__step[data-step={step}]")
    fb = _answer(page, step, f"{cells[slip]:.3f}")
    assert fb.get_attribute("data-result") == "hint", fb.inner_text()
    assert fb.inner_text().startswith("Not yet.") and words in fb.inner_text()
    assert form.locator(".mha-pc__worked").is_hidden()
    fb = _answer(page, step, "12345")
    assert fb.get_attribute("data-result") == "wrong"
    worked = form.locator(".mha-pc__worked")
    assert worked.is_visible()
    assert worked.inner_text().rstrip().endswith(f"{cells[step]:.3f}".replace("-", "\u2212"))
    watch.check()


def test_not_a_number_is_said_in_words(make_page, base_url):
    page, watch = make_page()
    page.goto(base_url + PAGE)
    page.locator("[data-mha-widget=predict_check][data-ready=true]").wait_for()
    fb = _answer(page, "score", "about one")
    assert fb.get_attribute("data-result") == "none" and "Type a number" in fb.inner_text()
    watch.check()
