"""Odd input in the browser: addresses, words and saved data a
tester typed, each with a clear outcome and no uncaught error (the page watch
fails a test on any)."""

from __future__ import annotations

import json

import pytest

from tests.browser_util import WAIT_READY_JS, wait_ready

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("require_models")]


@pytest.mark.parametrize("fragment", ["%", "%E0%A4%A", "x" * 10_000])
def test_a_malformed_or_huge_fragment_leaves_the_widgets_working(make_page, base_url, fragment):
    page, _ = make_page()
    page.set_default_timeout(60000)
    page.goto(base_url + "compare/?backend=wasm#" + fragment)
    state = page.evaluate(WAIT_READY_JS)
    assert state["ok"], state
    page.goto(base_url + "lesson/2-multihead-operation/#" + fragment)
    page.wait_for_selector("[data-mha-widget=worksheet] table", state="attached")  # the full tables sit behind a door
    assert "may have blocked scripts" not in page.inner_text("article")


def test_a_long_word_never_widens_the_inspector(make_page, base_url):
    page, _ = make_page()
    page.set_default_timeout(60000)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(base_url + "compare/?backend=wasm")
        wait_ready(page)
        word = "a" * 300
        page.evaluate("(p) => window.mhaCompare.run({prompt: p, maxNewTokens: 1})", f"Once upon a time {word} said")
        page.evaluate("() => window.mhaCompare.select('four_heads', 0)")
        page.wait_for_selector("table th .mha-heat__label")
        widest = page.evaluate("""() => Math.max(...[...document.querySelectorAll("table.mha-heat th[scope=row], table.mha-heat th[scope=col]")]
            .map((th) => th.getBoundingClientRect().width))""")
        assert widest < 200, widest
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width, width
        # The whole word is still there for screen readers and in the tooltip.
        titles = page.evaluate(
            "() => [...document.querySelectorAll('table.mha-heat th .mha-heat__label')].map((l) => l.title)"
        )
        assert any(t.startswith(word) for t in titles), [t[:40] for t in titles]


@pytest.mark.parametrize("temperature", ["1e-320", "5e-324", "0.001"])
def test_a_temperature_below_the_minimum_is_refused_in_words(make_page, base_url, load_asset, temperature):
    minimum = load_asset("models/manifest.json")["generation"]["min_temperature"]
    page, _ = make_page()
    page.set_default_timeout(60000)
    page.goto(base_url + "compare/?backend=wasm")
    wait_ready(page)
    run = page.evaluate("(t) => window.mhaCompare.run({temperature: t, maxNewTokens: 2})", temperature)
    assert run is None  # nothing generated
    message = page.inner_text("#mha-compare-temperature-msg")
    assert f"below the smallest one, {minimum}" in message, message
    run = page.evaluate("(t) => window.mhaCompare.run({temperature: t, maxNewTokens: 2})", str(minimum))
    assert run and all(r["ids"] and 0 not in r["ids"] for r in run["results"].values()), run


@pytest.mark.parametrize("name", ["constructor", "__proto__", "toString", "hasOwnProperty"])
def test_model_names_from_the_address_are_only_the_manifests(make_page, base_url, name):
    page, watch = make_page()
    page.set_default_timeout(60000)
    page.goto(base_url + f"compare/?backend=wasm&prompt=Once&inspect={name}&head=1")
    wait_ready(page)
    page.wait_for_function("() => window.mhaCompare.lastRun !== null")
    assert page.locator(".mha-compare__inspector:not([hidden])").count() == 0
    watch.check()  # no uncaught TypeError


def test_saved_progress_is_validated_on_load(make_page, base_url):
    invented = {
        "version": 1,
        "code": None,
        "solved": "yes",
        "failedChecks": 2,
        "revealed": "true",
        "solvedCode": ["not", "text"],
        "quiz": {"constructor": {"choice": 1, "correct": True}, "made_up": {"choice": 0, "correct": True}},
    }
    script = f"localStorage.setItem('mha-microgpt-progress', {json.dumps(json.dumps(invented))});"
    page, _ = make_page(init_script=script)
    page.set_default_timeout(60000)
    page.goto(base_url + "microgpt/")
    summary = page.locator(".mgpt-progress__summary")
    summary.wait_for()
    # Only true booleans count: not solved, solution not shown; the exercise's lines stay locked.
    assert "Exercise: not solved yet" in summary.inner_text(), summary.inner_text()
    page.wait_for_selector(".mgpt-src__line--locked")
    assert page.locator(".mgpt-src[data-unlocked='false']").count() == 1
