"""Heads add up: concat · W_O is the sum of each head's own part.

* Page 2: the head contributions follow the head explorer's receiver; each head's part
  is its message (worksheet H) times its own rows of W_O, and the parts add up to the
  worksheet's concat · W_O (``update``) for every receiver: float64 arithmetic on
  one-decimal numbers, so 1e-9 absolute is far above any rounding and far below a
  wrong row.
* Page 4: the stepper's W_O step draws one part per head plus W_O's bias, and they add
  up to the teaching graph's update (float32: tests/tolerance.py).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.tolerance import FLOAT32_REL

pytestmark = pytest.mark.browser
PAGE2 = "lesson/2-multihead-operation/"
PAGE4 = "lesson/4-model-training-generation/"
WS_ABS = 1e-9
# The graph's update is one float32 product of 64 terms; the parts split it into four of 16 plus the
# bias, summed in another order: some tens of float32 units of values near 1, so 1e-5 absolute.
PARTS_ABS = 1e-5


def test_page2_parts_follow_the_explorer_and_add_up_to_the_update(make_page, base_url, load_asset):
    ws = load_asset("worksheet.json")
    H, W_O, update = np.array(ws["H"]), np.array(ws["W_O"]), np.array(ws["update"])
    dh = ws["head_dim"]
    page, watch = make_page()
    page.goto(base_url + PAGE2)
    box = page.locator("[data-mha-widget='head_contributions']")
    box.locator(".mha-hc__row--sum").wait_for()
    explorer = page.locator("[data-mha-widget='head_explorer']")
    explorer.locator(".mha-hx__radio").first.wait_for()
    for receiver in (len(ws["tokens"]) - 1, 0, 4):
        explorer.locator(f".mha-hx__tokens input[value='{receiver}']").check()
        page.wait_for_function(
            "(r) => document.querySelector(\"[data-mha-widget='head_contributions']\").dataset.receiver == r",
            arg=str(receiver),
        )
        parts = [
            json.loads(box.locator(f".mha-hc__row--h{h + 1}").get_attribute("data-contribution"))
            for h in range(ws["heads"])
        ]
        for h, part in enumerate(parts):
            expected = H[h][receiver] @ W_O[h * dh : (h + 1) * dh]
            assert np.allclose(part, expected, rtol=0, atol=WS_ABS), (receiver, h)
        total = json.loads(box.locator(".mha-hc__row--sum").get_attribute("data-sum"))
        assert np.allclose(total, update[receiver], rtol=0, atol=WS_ABS), receiver
        assert np.allclose(np.sum(parts, axis=0), update[receiver], rtol=0, atol=WS_ABS)
        assert "the same numbers" in box.locator(".mha-hc__check").inner_text()
    watch.check()


def test_stepper_wo_step_shows_four_parts_that_add_up_to_the_update(make_page, base_url):
    page, watch = make_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(90000)
    page.goto(base_url + PAGE4)
    page.locator(".mha-st__form").wait_for()
    page.fill(".mha-st__input", "Lily found a")
    page.press(".mha-st__input", "Enter")
    page.wait_for_function("() => window.mhaStepper")
    page.evaluate("async () => { await window.mhaStepper.ready; }")
    while page.evaluate("window.mhaStepper.state().key") != "wo":
        page.keyboard.press("ArrowRight")
    box = page.locator(".mha-st__parts")
    parts = np.array(json.loads(box.get_attribute("data-parts")))
    bias = np.array(json.loads(box.get_attribute("data-bias")))
    shown = np.array(json.loads(box.get_attribute("data-update")))
    assert parts.shape == (4, shown.size)
    assert box.locator(".mha-st__strip").count() == 4 + 2  # four parts, the bias, the sum
    got = page.evaluate("window.mhaStepper.tensors()")
    update = np.asarray(got["update"]["data"]).reshape(got["update"]["dims"])[0, -1]
    assert np.allclose(shown, update, rtol=0, atol=0)
    assert np.allclose(parts.sum(axis=0) + bias, update, rtol=FLOAT32_REL, atol=PARTS_ABS)
    sentence = page.locator(".mha-st__sentence").inner_text()
    assert "each head adds its own contribution" in sentence
    watch.check()
