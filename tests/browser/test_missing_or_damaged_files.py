"""Missing or damaged files, one at a time, with ``page.route``: each must give
one message in words that names the file and what the learner can do, within a
few seconds, and never a trace of the runtime's internals.

The service worker is blocked here (conftest.make_page), so every request
reaches the routes.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from tests.site_paths import route_pattern

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("require_models")]

FAILED_LOAD = (r"Failed to load resource", r"Failed to fetch dynamically imported module")
# What onnxruntime's Emscripten loader prints when its .wasm is missing or damaged
# (the console only; the page must say it in words).
ENGINE_LOG = FAILED_LOAD + (
    r"wasm streaming compile failed",
    r"falling back to ArrayBuffer",
    r"failed to asynchronously prepare wasm",
    r"^Aborted\(",
)
NO_SUBTLE = "Object.defineProperty(Crypto.prototype, 'subtle', { get: () => undefined, configurable: true });"
# Internals a learner must never be shown.
INTERNALS = re.compile(r"ASSERTIONS|Aborted\(|messages above|Traceback|RuntimeError|undefined|\[object ")
SECONDS = 5.0  # "within a few seconds"


def gone(route):
    route.fulfill(status=404, body="gone")


def wait_text(page, selector: str, seconds: float = SECONDS) -> str:
    page.wait_for_selector(selector, timeout=seconds * 1000)
    return page.inner_text(selector)


def compare_alert(page, base_url, pattern, handler, started=None) -> str:
    page.route(pattern, handler)
    started = time.monotonic()
    page.goto(base_url + "compare/?backend=wasm")
    text = wait_text(page, ".mha-compare__alerts .mha-panel--error", seconds=15)
    assert time.monotonic() - started < 15
    assert page.locator(".mha-compare__alerts .mha-panel--error").count() == 1
    assert not INTERNALS.search(text), text
    status = page.inner_text(".mha-compare__status")
    assert "100%" not in status and "Downloading" not in status, status
    problems = page.inner_text(".mha-compare__columns")
    assert "damaged" not in problems, problems
    return text


@pytest.mark.parametrize("name", ["ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs"])
def test_missing_onnxruntime_module_is_named(make_page, base_url, name):
    page, _ = make_page(allow_console=FAILED_LOAD)
    text = compare_alert(page, base_url, route_pattern(f"vendor/ort/{name}"), gone)
    assert f"vendor/ort/{name}" in text and "missing on this site" in text, text
    assert "tell the site's maintainer" in text and "Reload" in text, text


def test_missing_onnxruntime_wasm_does_not_blame_the_model(make_page, base_url):
    page, _ = make_page(allow_console=ENGINE_LOG)
    text = compare_alert(page, base_url, route_pattern("vendor/ort/ort-wasm-simd-threaded.wasm"), gone)
    assert "vendor/ort/ort-wasm-simd-threaded.wasm" in text and "onnxruntime" in text, text
    assert "model may" not in text and "damaged" not in text, text


def test_damaged_onnxruntime_wasm_is_refused(make_page, base_url):
    page, _ = make_page(allow_console=ENGINE_LOG)
    text = compare_alert(
        page,
        base_url,
        route_pattern("vendor/ort/ort-wasm-simd-threaded.wasm"),
        lambda route: route.fulfill(status=200, body=b"<html>not wasm</html>", content_type="application/wasm"),
    )
    assert "ort-wasm-simd-threaded.wasm" in text and "damaged" in text and "model" not in text, text


def test_vocabulary_of_the_wrong_shape_is_refused(make_page, base_url, load_asset):
    vocab = load_asset("vocab.json")
    short = {**vocab, "itos": vocab["itos"][:100]}  # the columns would fill with blanks
    page, _ = make_page(allow_console=FAILED_LOAD)
    page.route(
        route_pattern("wasm_assets/vocab.json"),
        lambda route: route.fulfill(status=200, body=json.dumps(short), content_type="application/json"),
    )
    page.goto(base_url + "compare/?backend=wasm")
    text = wait_text(page, ".mha-compare__alerts .mha-panel--error")
    assert "wasm_assets/vocab.json" in text and "wrong shape" in text, text
    assert f"lists 100 tokens but says the models have {vocab['C']}" in text, text
    assert page.locator(".mha-compare__alerts .mha-panel--error").count() == 1
    assert page.get_by_role("button", name="Generate").is_disabled()


@pytest.mark.parametrize("corrupt", [False, True])
def test_model_checksum_runs_without_crypto_subtle(make_page, base_url, assets_dir, corrupt):
    """Plain HTTP under a host name has no crypto.subtle; the SHA-256 check must still run."""
    page, _ = make_page(allow_console=FAILED_LOAD, init_script=NO_SUBTLE)
    if corrupt:
        # Same size, one byte changed: only the digest can tell.
        data = bytearray((assets_dir / "models" / "one_head.onnx").read_bytes())
        data[len(data) // 2] ^= 0xFF
        page.route(
            route_pattern("wasm_assets/models/one_head.onnx"),
            lambda route: route.fulfill(status=200, body=bytes(data), content_type="application/octet-stream"),
        )
    page.set_default_timeout(60000)
    page.goto(base_url + "compare/?backend=wasm")
    assert page.evaluate("() => window.crypto.subtle") is None
    state = page.evaluate("""async () => {
      for (let i = 0; i < 600 && !window.mhaCompare; i++) await new Promise((r) => setTimeout(r, 25));
      return await window.mhaCompare.ready; }""")
    if not corrupt:
        assert state["ok"] and set(state["backends"]) == {"mlp", "one_head", "four_heads"}, state
        return
    assert set(state["backends"]) == {"mlp", "four_heads"} and set(state["errors"]) == {"one_head"}, state
    problem = page.inner_text(".mha-col[data-model='one_head'] .mha-col__problem")
    assert "damaged" in problem and "SHA-256" in problem and "one_head.onnx" in problem, problem
    assert "Ready: 2 of 3" in page.inner_text(".mha-compare__status")


def test_missing_worksheet_says_so_once(make_page, base_url):
    page, _ = make_page(allow_console=FAILED_LOAD)
    page.route(route_pattern("wasm_assets/worksheet.json"), gone)
    started = time.monotonic()
    page.goto(base_url + "lesson/2-multihead-operation/")
    text = wait_text(page, ".mha-ws-failure")
    assert time.monotonic() - started < SECONDS + 5
    widgets = page.locator("[data-mha-widget=worksheet], [data-mha-widget=head_explorer]")
    assert widgets.count() > 5
    # Wait until every worksheet widget has settled, then count the panels.
    page.wait_for_function(
        """() => [...document.querySelectorAll('[data-mha-widget=worksheet]')]
        .every((w) => w.hidden || w.querySelector('.mha-ws-failure'))""",
        timeout=SECONDS * 1000,
    )
    assert page.locator(".mha-ws-failure").count() == 1
    assert "wasm_assets/worksheet.json" in text and "missing on this site" in text and "Reload" in text, text
    assert not INTERNALS.search(text), text


@pytest.mark.parametrize("path", ["compare/", "lesson/2-multihead-operation/", "microgpt/"])
def test_missing_main_script_does_not_load_for_ever(make_page, base_url, path):
    page, _ = make_page(allow_console=FAILED_LOAD)
    page.route("**/js/main.js", gone)
    page.goto(base_url + path)
    page.wait_for_selector(".mha-main-missing", timeout=SECONDS * 1000)
    widgets = page.locator("[data-mha-widget]")
    assert widgets.count() == page.locator("[data-mha-widget] .mha-main-missing").count() > 0
    body = page.inner_text("article")
    assert "loading…" not in body and "loading..." not in body
    text = page.locator(".mha-main-missing").first.inner_text()
    assert "js/main.js" in text and "Reload" in text and "maintainer" in text, text
