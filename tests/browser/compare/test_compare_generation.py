"""The lesson site in a real headless Chromium (Debian's /usr/bin/chromium).

Every page here fails its test on a console error, an uncaught exception or a
request to another origin (see conftest.make_page).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.browser_util import WAIT_READY_JS, open_compare, wait_ready
from tests.site_paths import route_pattern

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("require_models")]
MODELS = ("mlp", "one_head", "four_heads")
NO_WEBGPU = "Object.defineProperty(Navigator.prototype, 'gpu', { get: () => undefined, configurable: true });"


def _ort_builds(watch) -> set[str]:
    return {u.rsplit("/", 1)[-1] for u in watch.requests if re.search(r"/vendor/ort/(?:[0-9a-f]{12}/)?ort\.", u)}


def test_tokenizer_vectors_match_in_browser(make_page, base_url, load_asset):
    vectors = load_asset("tokenizer_vectors.json")
    assert len(vectors["cases"]) >= 200
    page, _ = make_page()
    open_compare(page, base_url)
    got = page.evaluate(
        """(cases) => cases.map((c) => ({
        tokens: window.mhaCompare.tokenize(c.text), ids: window.mhaCompare.encode(c.text) }))""",
        vectors["cases"],
    )
    bad = [(c["text"], g) for c, g in zip(vectors["cases"], got) if g["tokens"] != c["tokens"] or g["ids"] != c["ids"]]
    assert not bad, bad[:5]


def test_wasm_logits_match_python_parity(make_page, base_url, load_asset):
    parity = load_asset("parity.json")
    page, watch = make_page()
    state = open_compare(page, base_url, "?backend=wasm")
    assert state["ok"] and state["backends"] == {m: "wasm" for m in MODELS}, state
    assert state["crossOriginIsolated"] is True
    for prompt in parity["prompts"]:
        window = page.evaluate("(t) => window.mhaCompare.window(t)", prompt["text"])
        assert window == prompt["window"], prompt["text"]
        for name in MODELS:
            got = np.array(
                page.evaluate(
                    "async ([n, w]) => Array.from(await window.mhaCompare.logitsForWindow(n, w))",
                    [name, prompt["window"]],
                )
            )
            want = np.array(prompt["logits"][name])
            assert got.shape == want.shape
            assert np.max(np.abs(got - want)) <= 1e-4, (name, prompt["text"], float(np.max(np.abs(got - want))))
    assert _ort_builds(watch) == {"ort.wasm.min.mjs"}


def test_preset_live_equals_saved(make_page, base_url, load_asset):
    preset = load_asset("evidence.json")["preset"]
    page, _ = make_page()
    state = open_compare(page, base_url)
    assert state["ok"], state
    assert page.input_value("#mha-compare-prompt") == preset["prompt"]
    run = page.evaluate("() => window.mhaCompare.run()")
    assert run["preset"] is True
    for name in MODELS:
        saved = preset["continuations"][name]
        assert run["results"][name]["ids"] == saved["ids"], name
        assert run["results"][name]["ended_with_eos"] == saved["ended_with_eos"], name
    badges = page.eval_on_selector_all("[data-match]", "els => els.map(e => e.dataset.match)")
    assert badges == ["yes"] * 3
    # Each column names the backend its session really runs on (and WebAssembly's thread count).
    threads = state["threads"]
    label = {"wasm": f"WebAssembly ({threads} thread{'s' if threads > 1 else ''})", "webgpu": "WebGPU"}
    shown = page.locator(".mha-col__backend").all_inner_texts()
    assert shown == [f"Backend: {label[state['backends'][name]]}" for name in MODELS], (shown, state)
    timing = page.locator(".mha-col__timing").all_inner_texts()
    assert all("per token" in t and "in all" in t for t in timing), timing


def test_sampling_matches_python_step_for_step(make_page, base_url, assets_dir, load_asset):
    """Temperature sampling with a seed gives the same ids as export.generate does with onnxruntime."""
    import onnxruntime as ort

    from export.generate import Mulberry32, choose_next, prompt_history
    from export.onnx_export import feeds
    from export.windows import context_window
    from export.wordlm import EOS_ID

    vocab = load_asset("vocab.json")
    prompt, temperature, seed, limit = "The little cat saw a big dog", 0.9, 5, 12
    page, _ = make_page()
    open_compare(page, base_url, "?backend=wasm")
    for name in ("mlp", "four_heads"):
        session = ort.InferenceSession(str(assets_dir / f"models/{name}.onnx"), providers=["CPUExecutionProvider"])
        history, rng, want = prompt_history(vocab["itos"], prompt), Mulberry32(seed), []
        for _ in range(limit):
            logits = session.run(["logits"], feeds(session, np.array([context_window(history, 64)], dtype=np.int64)))[
                0
            ][0]
            nxt = choose_next(logits, temperature, rng)
            if nxt == EOS_ID:
                break
            history.append(nxt)
            want.append(nxt)
        got = page.evaluate(
            "([n, p, o]) => window.mhaCompare.generate(n, p, o)",
            [name, prompt, {"maxNewTokens": limit, "temperature": temperature, "seed": seed}],
        )
        assert got["ids"] == want, name


def test_without_webgpu_the_page_uses_wasm_and_says_so(make_page, base_url):
    page, watch = make_page(init_script=NO_WEBGPU)
    state = open_compare(page, base_url, "?backend=webgpu")
    assert state["ok"] and set(state["backends"].values()) == {"wasm"}, state
    notice = page.inner_text(".mha-compare__notice")
    assert "WebGPU is not available" in notice and "WebAssembly" in notice
    assert all("WebAssembly" in t for t in page.locator(".mha-col__backend").all_inner_texts())
    assert _ort_builds(watch) == {"ort.wasm.min.mjs"}  # the WebGPU build is never fetched
    run = page.evaluate("() => window.mhaCompare.run({maxNewTokens: 3})")
    assert all(len(r["ids"]) <= 3 and r["backend"] == "wasm" for r in run["results"].values())


@pytest.mark.slow
def test_webgpu_logits_match_wasm(make_page, base_url, load_asset):
    """WebGPU (here Chromium's software adapter, very slow) against WASM for the four-head model."""
    parity = load_asset("parity.json")
    page, watch = make_page()
    page.goto(base_url + "compare/?backend=webgpu")
    state = page.evaluate(WAIT_READY_JS)
    probe = page.evaluate("() => window.mhaCompare.probeWebGPU()")
    if not probe["available"]:
        pytest.skip(f"this headless Chromium offers no WebGPU adapter ({probe['reason']})")
    assert state["build"] == "webgpu" and _ort_builds(watch) == {"ort.webgpu.min.mjs"}
    assert state["backends"].get("four_heads") == "webgpu", f"WebGPU did not start: {state['notices']}"
    window = parity["prompts"][0]["window"]
    for name in ("four_heads",):
        gpu_logits = np.array(
            page.evaluate(
                "async ([n, w]) => Array.from(await window.mhaCompare.logitsForWindow(n, w, {backend: 'webgpu'}))",
                [name, window],
            )
        )
        cpu_logits = np.array(
            page.evaluate(
                "async ([n, w]) => Array.from(await window.mhaCompare.logitsForWindow(n, w, {backend: 'wasm'}))",
                [name, window],
            )
        )
        assert np.max(np.abs(gpu_logits - cpu_logits)) <= 1e-3, name
        if name != "mlp":
            att = page.evaluate(
                "async ([n, w]) => Array.from(await window.mhaCompare.attentionForWindow(n, w, {backend: 'webgpu'}))",
                [name, window],
            )
            assert len(att) == (4 if name == "four_heads" else 1) * 64


def test_works_without_cross_origin_isolation(make_page, servers):
    page, _ = make_page()
    state = open_compare(page, servers["plain"])
    assert state["ok"] and state["crossOriginIsolated"] is False and state["threads"] == 1, state
    run = page.evaluate("() => window.mhaCompare.run({maxNewTokens: 4})")
    assert all(len(r["ids"]) >= 1 or r["ended_with_eos"] for r in run["results"].values())
    assert all("1 thread" in t for t in page.locator(".mha-col__backend").all_inner_texts())


BAD_PROMPTS = {
    "empty": "",
    "whitespace": " \n\t  \u3000 ",
    "long": "the cat sat on the mat . " * 834,  # 20,016 characters
    "emoji": "🦉🦉 the owl 👍🏽 said hi 🇺🇳",
    "rtl": "שלום עולם مرحبا بالعالم and then",
    "control": "a\x00b\x07c\u200d\u202ed\x1b[31mred",
    "script": '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2"> hello',
}


def test_bad_prompts_give_a_result_and_stay_escaped(make_page, base_url):
    page, _ = make_page()
    open_compare(page, base_url, "?backend=wasm")
    for label, text in BAD_PROMPTS.items():
        run = page.evaluate("(p) => window.mhaCompare.run({prompt: p, maxNewTokens: 3})", text)
        assert run is not None, label
        for name in MODELS:
            r = run["results"][name]
            assert r["error"] is None and (len(r["ids"]) >= 1 or r["ended_with_eos"]), (label, name, r)
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator(".mha-compare img, .mha-compare script").count() == 0
    # the last prompt is shown as text, not markup
    assert "script" in page.inner_text(".mha-col[data-model='mlp'] .mha-col__live")
    # the long prompt gave a message about the 64-token window
    page.evaluate("(p) => window.mhaCompare.run({prompt: p, maxNewTokens: 1})", BAD_PROMPTS["long"])
    assert "last 64" in page.inner_text(".mha-compare__message")
    # an invalid token limit is a message, not an exception
    assert page.evaluate("() => window.mhaCompare.run({prompt: 'hi', maxNewTokens: 0})") is None
    assert "1 to 64" in page.inner_text("#mha-compare-tokens-msg")
    assert "New tokens" in page.inner_text(".mha-compare__message")


def test_missing_and_corrupt_models_show_a_panel(make_page, base_url):
    page, _ = make_page(allow_console=(r"Failed to load resource",))
    page.route(
        route_pattern("wasm_assets/models/four_heads.onnx"), lambda route: route.fulfill(status=404, body="gone")
    )
    page.route(
        route_pattern("wasm_assets/models/one_head.onnx"), lambda route: route.fulfill(status=200, body=b"\x00" * 5000)
    )
    state = open_compare(page, base_url, "?backend=wasm")
    assert set(state["backends"]) == {"mlp"} and set(state["errors"]) == {"one_head", "four_heads"}, state
    four = page.inner_text(".mha-col[data-model='four_heads'] .mha-col__problem")
    one = page.inner_text(".mha-col[data-model='one_head'] .mha-col__problem")
    assert "could not be downloaded" in four and "make models" in four
    assert "damaged" in one
    run = page.evaluate("() => window.mhaCompare.run({maxNewTokens: 3})")
    assert set(run["results"]) == {"mlp"} and run["results"]["mlp"]["ids"]


def test_missing_artefacts_leave_the_page_usable(make_page, base_url):
    page, _ = make_page(allow_console=(r"Failed to load resource",))
    page.route(route_pattern("wasm_assets/vocab.json"), lambda route: route.fulfill(status=404, body="gone"))
    state = open_compare(page, base_url)
    assert state["ok"] is False
    alert = page.inner_text(".mha-compare__alerts")
    assert "missing" in alert and "make models" in alert
    assert page.locator("h1").inner_text().startswith("Compare their stories")


def test_unsupported_browser_gets_a_panel(make_page, base_url):
    page, _ = make_page(init_script="delete globalThis.WebAssembly;")
    state = open_compare(page, base_url)
    assert state["ok"] is False
    alert = page.inner_text(".mha-compare__alerts")
    assert "cannot run the models" in alert and "WebAssembly" in alert
    assert page.locator(".md-content h1").inner_text().startswith("Compare their stories")


def test_sub_path_and_instant_navigation(make_page, servers):
    page, watch = make_page()
    page.set_default_timeout(60000)
    page.goto(servers["subpath"])
    page.get_by_role("link", name="Compare their stories").first.click()
    page.wait_for_url("**/some/lesson/compare/")
    state = page.evaluate(WAIT_READY_JS)
    assert state["ok"], state
    assert all("/some/lesson/" in u for u in watch.requests), [u for u in watch.requests if "/some/lesson/" not in u]
    # leave the page: the widget is disposed; come back: it mounts again
    page.get_by_role("link", name="Home").first.click()
    page.wait_for_function("() => !window.mhaCompare")
    page.go_back()
    state = wait_ready(page)
    assert state["ok"], state
    assert page.locator(".mha-compare .mha-col").count() == 3


def test_token_inspector_by_keyboard(make_page, base_url):
    page, _ = make_page()
    open_compare(page, base_url, "?backend=wasm")
    page.evaluate("() => window.mhaCompare.run({prompt: 'Tom had a red ball. He', maxNewTokens: 4})")
    first = page.locator(".mha-col[data-model='four_heads'] .mha-token[data-step]").first
    first.focus()
    page.keyboard.press("Enter")
    inspector = page.locator(".mha-compare__inspector")
    inspector.locator("table.mha-heat").wait_for()
    headers = inspector.locator("table.mha-heat thead tr").last.locator("th").all_inner_texts()
    assert headers == ["token", "one head", "head 1", "head 2", "head 3", "head 4"]
    rows = inspector.locator("table.mha-heat tbody tr").count()
    assert rows == len(page.evaluate("() => window.mhaCompare.tokenize('Tom had a red ball. He')")) + 1  # + BOS
    assert inspector.locator(".mha-topk__model").count() == 3
    assert inspector.locator(".mha-topk__list li").count() == 15
    assert first.get_attribute("aria-pressed") == "true"


def test_phone_width_and_dark_mode(make_page, base_url):
    page, _ = make_page(viewport={"width": 390, "height": 800}, color_scheme="dark")
    open_compare(page, base_url, "?backend=wasm")
    page.evaluate("() => window.mhaCompare.run({maxNewTokens: 6})")
    page.locator(".mha-col[data-model='one_head'] .mha-token[data-step]").first.click()
    page.locator("table.mha-heat").wait_for()
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, width
    assert page.evaluate("() => document.body.getAttribute('data-md-color-scheme')") == "slate"
    colours = page.evaluate("""() => { const c = getComputedStyle(document.querySelector('.mha-col'));
        const b = getComputedStyle(document.body); return [c.color, b.backgroundColor]; }""")
    assert colours[0] != colours[1]


def test_home_page_links_to_compare(make_page, base_url):
    page, _ = make_page()
    page.goto(base_url)
    assert "Multi-head attention" in page.locator("h1").inner_text()
    assert page.get_by_role("link", name="Compare their stories").count() >= 1
