"""A very long word wraps instead of widening the page: page 4's stepper with a
?prompt= of 3,000 characters and a 300-character word, page 3's playground with
a 300-character word, at phone and desktop widths. (Page 4 was up to 14,905 px
wide.)"""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.browser_util import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("require_models")]

WORD = "supercalifragilistic" * 15  # 300 characters, no space
WIDE_JS = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"


@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("prompt", [f"Lily found a {WORD}", "once " + "a" * 3000])
def test_the_stepper_wraps_a_long_word(make_page, base_url, width, prompt):
    page, _ = make_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(120000)
    page.goto(base_url + "lesson/4-model-training-generation/?prompt=" + quote(prompt))
    wait_until(page, "async () => window.mhaStepper && (await window.mhaStepper.ready, true)", timeout_ms=120000)
    for _ in range(3):  # the first steps show the prompt's words, each differently
        assert page.evaluate(WIDE_JS) <= 0, page.evaluate(WIDE_JS)
        page.click(".mha-st__nav .md-button--primary")


@pytest.mark.parametrize("width", [390, 1280])
def test_the_playground_wraps_a_long_word(make_page, base_url, width):
    page, _ = make_page(viewport={"width": width, "height": 900})
    page.goto(base_url + "lesson/3-training-examples/")
    page.fill(".mha-tp__input", f"The cat saw a {WORD} today.")
    page.wait_for_function("(w) => document.querySelector('.mha-tp').innerText.includes(w.slice(0, 40))", arg=WORD)
    assert page.evaluate(WIDE_JS) <= 0, page.evaluate(WIDE_JS)
