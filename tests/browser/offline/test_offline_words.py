""" "Offline" is said when the browser is offline, and only then.

* Page 4's stepper, never opened online, gives the offline advice when the
  learner opens it offline (it used to say "could not be downloaded … tell the
  site's maintainer").
* A damaged file while the browser is online is called damaged, never "You are
  offline", even where the site's build.json does not answer either.
"""

from __future__ import annotations

import re

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("require_models")]

OFFLINE = "offline (or the site is unreachable); reconnect and reload"
CONSOLE = (r"Failed to load resource", r"Failed to fetch", r"ERR_INTERNET_DISCONNECTED", r"net::ERR_FAILED")
PAGE4 = "lesson/4-model-training-generation/"


def test_the_stepper_gives_the_offline_advice_offline(make_page, base_url):
    page, _ = make_page(allow_console=CONSOLE)
    page.set_default_timeout(60000)
    page.goto(base_url + PAGE4)
    page.wait_for_selector(".mha-st__form button[type=submit]")
    page.context.set_offline(True)
    page.click(".mha-st__form button[type=submit]")
    page.wait_for_selector(".mha-st__problem .mha-panel, .mha-st__problem [role]", timeout=30000)
    text = page.inner_text(".mha-st__problem")
    assert OFFLINE in text, text
    assert "maintainer" not in text, text
    assert text.count(OFFLINE) == 1, text


def test_a_damaged_file_online_is_not_called_offline(make_page, base_url):
    page, _ = make_page(allow_console=CONSOLE + (r"damaged",))
    page.set_default_timeout(60000)
    # A model whose bytes are not the model's, and a site that does not answer for build.json.
    page.route(
        re.compile(r"/wasm_assets/models/[^/]+\.onnx"),
        lambda route: route.fulfill(status=200, body=b"\0" * 4096, content_type="application/octet-stream"),
    )
    page.route(re.compile(r"/build\.json"), lambda route: route.abort("connectionreset"))
    page.goto(base_url + "compare/?backend=wasm")
    page.wait_for_function("() => /damaged/.test(document.querySelector('.mha-compare').innerText)")
    text = page.inner_text(".mha-compare")
    assert "offline" not in text.lower(), text
