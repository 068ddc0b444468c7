"""The build page ("Build it yourself") offline after one visit, in headless Chromium.

A first visit only opens the page and waits until its first Check could answer
(no Check, no continuation). Offline afterwards, the page still gets ready,
gives the right verdict for a correct and a wrong function (with its words),
and the learner's function still drives the model: the rest of the model (the
tail graph) was kept on the first visit although no continuation ran.
"""

from __future__ import annotations

import re

import pytest

from tests.browser.build.test_build_drives_model import DRIVE_JS, unlock_all
from tests.browser.build.test_build_page import CHECK_JS, open_page
from tests.browser.offline.test_offline_and_publishing import OFFLINE_CONSOLE, _wait_cached
from tests.pyodide.test_build_exercise import MISTAKES, solution

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("require_models")]


def test_the_build_page_checks_and_drives_the_model_offline_after_one_visit(make_page, base_url):
    page, watch = make_page(service_workers="allow", allow_console=OFFLINE_CONSOLE)
    open_page(page, base_url)
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    _wait_cached(
        page,
        {
            "models/four_heads.onnx",
            "models/four_heads.steps.onnx",
            "models/four_heads.tail.onnx",
            "ort/ort.wasm.min.mjs",
            "ort/ort-wasm-simd-threaded.mjs",
            "ort/ort-wasm-simd-threaded.wasm",
            "pyodide/pyodide.mjs",
            "pyodide/pyodide.asm.wasm",
            "pyodide/python_stdlib.zip",
        },
    )

    page.context.set_offline(True)
    open_page(page, base_url)
    assert page.evaluate("(t) => window.mhaBuild.setPrompt(t)", "lily") is True
    _, make, words, _ = MISTAKES["project_no_bias"]
    wrong = page.evaluate(CHECK_JS, ["project", make()])
    assert not wrong["passed"] and re.search(words, wrong["message"]), wrong
    unlock_all(page)
    out = page.evaluate(DRIVE_JS, solution())
    assert out["same"] and out["mine"] == out["model"] and out["mine"], out
    watch.check()
