"""A slow line and a lost connection: a message in words, and the page keeps working.

* On a throttled line (CDP network conditions) the compare page's progress
  counts onnxruntime's WebAssembly engine as well as the models, and says
  100 % only when the models run.
* Offline after the page's HTML, every runtime file that does not come says
  "you are offline (or the site is unreachable); reconnect and reload", on the
  compare page and on the microgpt page (Pyodide's pyodide.mjs included).
"""

from __future__ import annotations

import re

import pytest

from tests.browser_util import WAIT_READY_JS
from tests.site_paths import versions

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("require_models")]

OFFLINE = "offline (or the site is unreachable); reconnect and reload"
STATUS_LOG = """
  window.__statusLog = [];
  new MutationObserver(() => {
    const s = document.querySelector('.mha-compare__status');
    if (s) window.__statusLog.push({t: performance.now(), text: s.innerText});
  }).observe(document, {subtree: true, childList: true, characterData: true});
"""
CONSOLE = (r"Failed to load resource", r"Failed to fetch", r"ERR_INTERNET_DISCONNECTED", r"net::ERR_FAILED")


def test_progress_counts_the_engine_and_100_means_ready(make_page, base_url, built_site, load_asset):
    page, _ = make_page(init_script=STATUS_LOG)
    page.set_default_timeout(120000)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    # About 80 Mbit/s with 20 ms: slow enough to see the bar move, quick enough for a test.
    cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 20, "downloadThroughput": 10_000_000, "uploadThroughput": 1_000_000},
    )
    page.goto(base_url + "compare/?backend=wasm")
    state = page.evaluate(WAIT_READY_JS)
    assert state["ok"], state
    log = page.evaluate("() => window.__statusLog")
    engine = versions(built_site)["sizes"]["vendor/ort/ort-wasm-simd-threaded.wasm"]
    models = sum(m["bytes"] for m in load_asset("models/manifest.json")["models"])
    totals = {float(m.group(1)) for e in log for m in [re.search(r"of ([\d.]+) MB", e["text"])] if m}
    assert totals, log
    assert max(totals) == pytest.approx((engine + models) / 1e6, abs=0.06), (totals, engine, models)
    percents = [int(m.group(1)) for e in log for m in [re.search(r"\((\d+)%\)", e["text"])] if m]
    assert percents and max(percents) <= 99, percents
    assert "Ready" in log[-1]["text"], log[-1]


def _offline_routes(page, patterns):
    """The page's requests (page.route, ahead of the page watch's) and its workers' (context.route)
    fail as offline, and the browser says it is offline (the page says "offline" only then)."""
    page.add_init_script(
        "Object.defineProperty(Navigator.prototype, 'onLine', { get: () => false, configurable: true });"
    )
    for pattern in patterns:
        page.route(pattern, lambda route: route.abort("internetdisconnected"))
        page.context.route(pattern, lambda route: route.abort("internetdisconnected"))


def test_compare_page_offline_after_its_html(make_page, base_url):
    page, _ = make_page(allow_console=CONSOLE)
    page.set_default_timeout(60000)
    _offline_routes(page, [re.compile(r"/wasm_assets/models/[^/]+\.onnx"), re.compile(r"/build\.json")])
    page.goto(base_url + "compare/?backend=wasm")
    page.wait_for_function("(w) => document.querySelector('.mha-compare').innerText.includes(w)", arg=OFFLINE)
    text = page.inner_text(".mha-compare")
    assert "damaged" not in text, text


def test_microgpt_page_offline_after_its_html(make_page, base_url):
    page, _ = make_page(allow_console=CONSOLE + (r"pyodide", r"404"))
    page.set_default_timeout(60000)
    _offline_routes(page, [re.compile(r"/vendor/pyodide/"), re.compile(r"/build\.json")])
    page.goto(base_url + "microgpt/")
    page.wait_for_function("() => document.querySelector('.mgpt-ex__status')?.dataset.phase === 'error'")
    text = page.inner_text(".mgpt-ex__status")
    assert OFFLINE in text and "pyodide.mjs" in text, text
    assert "Failed to fetch dynamically imported module" not in text, text
