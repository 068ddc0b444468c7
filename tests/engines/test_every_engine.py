"""The cross-engine set: what every learner's browser must do, in Chromium, Firefox and WebKit.

A fraction of the Chromium suite, chosen for coverage: every page loads without an
error at desktop and phone width; the compare page gets ready and its greedy
continuations of the held-out preset are the saved ones; each exercise gives the right
verdict to its starter, a wrong answer and a correct one, online and offline after a
first visit; offline after a first visit every page opens. Each test runs once per
engine (tests/engines/conftest.py), against the same build.

An exercise page is one entry of EXERCISES (its path, what its page object is called,
and the three answers), so a new exercise page joins every engine with one line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser_util import WIDGETS_DRAWN
from tests.engines.drivers import NETWORK_FAILURES
from tests.pyodide.test_checker_without_browser import MISTAKES, solution, starter

pytestmark = [pytest.mark.browser, pytest.mark.engines, pytest.mark.usefixtures("require_models")]

MODELS = ("mlp", "one_head", "four_heads")
WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}

# path -> the page's test hook and its three answers: (name, source, passes, what the message must say)
EXERCISES = {
    "microgpt/": {
        "hook": "mhaExercise",
        "answers": [
            ("starter", starter, False, r"."),
            ("append", MISTAKES["append"][0], False, MISTAKES["append"][1]),
            ("correct", solution, True, r"^Passed!"),
        ],
    },
}

# Every widget has drawn itself and none still says it is loading (as tests/browser/lesson/test_word_budget.py).
COMPARE_READY = """async () => {
  for (let i = 0; i < 2400 && !window.mhaCompare; i++) await new Promise((r) => setTimeout(r, 50));
  if (!window.mhaCompare) throw new Error("window.mhaCompare never appeared");
  return await window.mhaCompare.ready;
}"""
HOOK_READY = """async (hook) => {
  for (let i = 0; i < 2400 && !window[hook]; i++) await new Promise((r) => setTimeout(r, 50));
  if (!window[hook]) throw new Error(`window.${hook} never appeared`);
  return await window[hook].ready;
}"""
CHECK = "([hook, source]) => window[hook].check(source)"
# The runtime files an exercise needs offline, in the service worker's runtime cache.
PYTHON_CACHED = r"""async () => {
  const names = (await caches.keys()).filter((n) => n.startsWith("mha-runtime-"));
  const have = new Set();
  for (const name of names) for (const r of await (await caches.open(name)).keys()) have.add(new URL(r.url).pathname.split("/").pop());
  return ["pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip"].every((f) => have.has(f));
}"""


def site_pages(site: Path) -> list[str]:
    """Every page of the built site, as paths relative to its root ('' for the home page)."""
    pages = []
    for index in site.rglob("index.html"):
        rel = index.parent.relative_to(site).as_posix()
        if rel.split("/")[0] in ("vendor", "assets", "wasm_assets", "downloads", "search"):
            continue
        pages.append("" if rel == "." else rel + "/")
    return sorted(pages)


def _label(engine) -> str:
    return f"{engine.name} {engine.version}"


def _open_ready(t, url: str, path: str) -> None:
    """Open a page and wait until it has done what it does on arrival."""
    t.goto(url + path)
    t.wait_until(WIDGETS_DRAWN, timeout_s=120)
    if path == "compare/":
        state = t.evaluate(COMPARE_READY)
        assert state["ok"], state
    if path in EXERCISES:
        t.evaluate(HOOK_READY, EXERCISES[path]["hook"])


@pytest.mark.parametrize("width", list(WIDTHS))
def test_every_page_loads_without_errors(engine, site, tab, built_site, width):
    server = site()
    t = tab(*WIDTHS[width])
    inner = t.evaluate("() => innerWidth")
    # MiniBrowser's window has a minimum width (447 px here): narrower than the site's narrowest
    # breakpoint (30em, 480 px), so it lays the pages out as a 390 px phone does.
    assert inner == WIDTHS[width][0] or (engine.name == "webkit" and width == "phone" and inner < 480), inner
    found = {}
    for path in site_pages(built_site):
        _open_ready(t, server.url, path)
        # Moving on to the next page cuts the requests still on their way (Material's prefetch of a
        # link, a figure's file): Firefox and WebKit report those as errors of the page. They are the
        # engine's network reports, not page code failing (test_leaving_a_page_mid_start_is_quiet
        # holds the page to staying quiet when it is left).
        errors = t.errors(allow=NETWORK_FAILURES)
        if errors:
            found[path or "home"] = errors
    assert not found, f"{_label(engine)} at {WIDTHS[width][0]} px: {found}"


# What this browser lacks, as the page can tell: each lack must be said in the page's words.
FEATURES = """() => ({ webgpu: Boolean(navigator.gpu), isolated: Boolean(globalThis.crossOriginIsolated),
  sharedMemory: typeof SharedArrayBuffer === "function" })"""


def _assert_lacks_said(engine, t, state) -> None:
    """WebGPU absent and WebAssembly threads missing (and why) are said on the compare page."""
    has = t.evaluate(FEATURES)
    notices = " ".join(state["notices"])
    if not has["webgpu"]:
        assert "WebGPU is not available" in notices and "WebAssembly" in notices, (_label(engine), has, notices)
    if not has["isolated"]:
        assert "runs on one thread: this page is not cross-origin isolated" in notices, (_label(engine), has, notices)
    elif not has["sharedMemory"]:
        assert "runs on one thread: this browser offers no SharedArrayBuffer" in notices, (_label(engine), has, notices)
    else:
        assert re.search(r"WebAssembly runs on (one thread|\d+ threads)", notices), (_label(engine), has, notices)


def test_compare_page_reproduces_the_saved_continuations(engine, site, tab, load_asset):
    preset = load_asset("evidence.json")["preset"]
    server = site()
    t = tab()
    t.goto(server.url + "compare/")
    state = t.evaluate(COMPARE_READY)
    assert state["ok"] and set(state["backends"]) == set(MODELS), (_label(engine), state)
    _assert_lacks_said(engine, t, state)
    run = t.evaluate("() => window.mhaCompare.run()")
    assert run["preset"] is True
    for name in MODELS:
        saved = preset["continuations"][name]
        got = run["results"][name]
        assert (got["ids"], got["ended_with_eos"]) == (saved["ids"], saved["ended_with_eos"]), (_label(engine), name)


def test_without_isolation_the_compare_page_says_why_one_thread(engine, site, tab):
    server = site(isolation=False)
    t = tab()
    t.goto(server.url + "compare/")
    state = t.evaluate(COMPARE_READY)
    assert state["ok"] and not state["crossOriginIsolated"], (_label(engine), state)
    _assert_lacks_said(engine, t, state)


def _verdicts(t, path: str) -> list[tuple[str, bool, str]]:
    hook = EXERCISES[path]["hook"]
    t.evaluate(HOOK_READY, hook)
    out = []
    for name, source, passes, pattern in EXERCISES[path]["answers"]:
        verdict = t.evaluate(CHECK, [hook, source()])
        if verdict["passed"] is not passes or not re.search(pattern, verdict["message"], re.S):
            out.append((name, verdict["passed"], verdict["message"][:300]))
    return out


@pytest.mark.parametrize("path", list(EXERCISES))
def test_exercise_verdicts_online_and_offline(engine, site, tab, path):
    server = site()
    t = tab()
    t.goto(server.url + path)
    wrong = _verdicts(t, path)
    assert not wrong, f"{_label(engine)} online: {wrong}"
    # A first visit leaves the page and Python's files with the service worker.
    t.wait_until("() => navigator.serviceWorker.controller !== null", timeout_s=60)
    t.wait_until(PYTHON_CACHED, timeout_s=120)
    server.offline()
    t.reload()
    wrong = _verdicts(t, path)
    assert not wrong, f"{_label(engine)} offline: {wrong}"
    errors = t.errors(allow=NETWORK_FAILURES)
    assert not errors, f"{_label(engine)} offline: {errors}"


def test_every_page_opens_offline_after_a_first_visit(engine, site, tab, built_site):
    server = site()
    t = tab()
    t.goto(server.url)
    t.wait_until("() => navigator.serviceWorker.controller !== null", timeout_s=60)
    server.offline()
    opened = {}
    for path in site_pages(built_site):
        t.goto(server.url + path)
        # Drawn, or saying in words why not: a widget whose file the first visit did not store asks
        # build.json why (runtime/assets.js) before it says so, and that request fails offline too.
        t.wait_until(WIDGETS_DRAWN, timeout_s=60)
        opened[path] = t.evaluate("() => document.querySelector('h1').textContent.trim()")
    errors = t.errors(allow=NETWORK_FAILURES)  # files no page used online are not there: the pages say so
    assert not errors, f"{_label(engine)} offline: {errors}"
    assert all(opened.values()), opened


# Leaving a page while it starts (its widgets loading, Python or the models starting), online and
# offline, as tests/browser/ does in Chromium: the widgets are disposed on `pagehide` (main.js), and
# a download cut short by leaving is not reported by the page (ort_engine.js leaves onnxruntime's copy waiting).
LEAVE_MID_START = [
    ("lesson/2-multihead-operation/", "lesson/3-training-examples/"),
    ("compare/", ""),
    ("microgpt/", "credits/"),
    ("lesson/build/", "lesson/how-measured/"),
]


@pytest.mark.parametrize("offline", [False, True], ids=["online", "offline"])
def test_leaving_a_page_mid_start_is_quiet(engine, site, tab, offline):
    server = site()
    t = tab()
    if offline:  # a first visit leaves everything with the service worker
        for path in ("compare/", "microgpt/"):
            _open_ready(t, server.url, path)
        t.wait_until(PYTHON_CACHED, timeout_s=120)
        server.offline()
    for leave, arrive in LEAVE_MID_START:
        t.goto(server.url + leave)
        t.goto(server.url + arrive)
        t.wait_until(WIDGETS_DRAWN, timeout_s=120)
    # Offline, what the first visit did not use (the favicon, page 2's models) is not stored: the
    # engines report those requests (NETWORK_FAILURES), and the pages say so in words.
    errors = t.errors(allow=(r"favicon\.png", *NETWORK_FAILURES) if offline else NETWORK_FAILURES)
    assert not errors, f"{_label(engine)}: {errors}"
