"""The compare page as a learner meets it: saved continuations, joined tokens, the
inspector by keyboard, field messages, the model cards, leaving the page, and an
axe audit (serious and critical violations) in light and dark.

Generation itself is checked against Python's onnxruntime step for step here
(greedy) and in test_site_browser.py (sampled).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.site_paths import route_pattern

from export.wordlm import detokenize
from tests.browser_util import WAIT_READY_JS, open_compare

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("require_models")]
ROOT = Path(__file__).resolve().parents[3]
MODELS = ("mlp", "one_head", "four_heads")


def _col(name: str) -> str:
    return f".mha-col[data-model='{name}']"


def test_greedy_generation_matches_python_step_for_step(make_page, base_url, assets_dir, load_asset):
    """The hook's generate() runs runtime/generate.js's loop; greedy ids equal export.generate's with onnxruntime."""
    import onnxruntime as ort

    from export.generate import generate_ids, prompt_history
    from export.onnx_export import feeds  # the attention models' head_mask: ones

    vocab = load_asset("vocab.json")
    prompt, limit = "Lily and Ben went to the park. They saw a", 16
    page, _ = make_page()
    open_compare(page, base_url, "?backend=wasm")
    for name in MODELS:
        session = ort.InferenceSession(str(assets_dir / f"models/{name}.onnx"), providers=["CPUExecutionProvider"])
        want, ended = generate_ids(
            lambda w, session=session: session.run(["logits"], feeds(session, w))[0][0],
            prompt_history(vocab["itos"], prompt),
            limit,
            0.0,
            0,
            vocab["T"],
        )
        got = page.evaluate(
            "([n, p, k]) => window.mhaCompare.generate(n, p, {maxNewTokens: k, temperature: 0})", [name, prompt, limit]
        )
        assert got["ids"] == want and got["ended_with_eos"] == ended, name


def test_saved_continuations_show_on_load_and_only_for_the_preset(make_page, base_url, load_asset):
    preset = load_asset("evidence.json")["preset"]
    page, _ = make_page()
    open_compare(page, base_url)
    for name in MODELS:
        saved = preset["continuations"][name]
        text = page.inner_text(f"{_col(name)} .mha-saved__text")
        assert text == detokenize(saved["tokens"]) + (" [end of story]" if saved["ended_with_eos"] else ""), name
    assert page.eval_on_selector_all("[data-match]", "els => els.map(e => e.dataset.match)") == ["pending"] * 3
    # typing another opening takes the preset's boxes away; a custom run does not bring them back
    page.fill("#mha-compare-prompt", "Tom had a red ball.")
    assert page.locator(".mha-saved").count() == 0
    page.evaluate("() => window.mhaCompare.run({maxNewTokens: 3})")
    assert page.locator(".mha-saved").count() == 0
    # the preset opening with other settings shows the boxes, and says they are not comparable
    page.evaluate("(p) => window.mhaCompare.run({prompt: p, maxNewTokens: 3})", preset["prompt"])
    assert page.eval_on_selector_all("[data-match]", "els => els.map(e => e.dataset.match)") == ["na"] * 3


def test_live_tokens_are_joined_like_the_saved_text(make_page, base_url, load_asset):
    preset = load_asset("evidence.json")["preset"]
    page, _ = make_page()
    open_compare(page, base_url, "?backend=wasm")
    run = page.evaluate("() => window.mhaCompare.run()")
    assert run["preset"] is True
    for name in MODELS:
        saved = preset["continuations"][name]
        want = detokenize(preset["prompt_tokens"] + saved["tokens"]) + (
            " [end of story]" if saved["ended_with_eos"] else ""
        )
        live = page.inner_text(f"{_col(name)} .mha-col__live")
        assert " ".join(live.split()) == want, name
    assert "radio. he" in page.inner_text(f"{_col('mlp')} .mha-col__live")


def test_inspector_keeps_unknown_words_opens_in_view_and_closes_with_escape(make_page, base_url):
    page, _ = make_page(viewport={"width": 1280, "height": 700})
    open_compare(page, base_url, "?backend=wasm")
    prompt = "Tom saw a zorblax in the garden. He"
    page.evaluate("(p) => window.mhaCompare.run({prompt: p, maxNewTokens: 3})", prompt)
    button = page.locator(f"{_col('four_heads')} .mha-token[data-step]").first
    button.focus()
    page.keyboard.press("Enter")
    inspector = page.locator(".mha-compare__inspector")
    inspector.locator("table.mha-heat").wait_for()
    rows = inspector.locator("table.mha-heat tbody th").all_inner_texts()
    assert rows[0] == "⟨start⟩" and "⟨unknown⟩" not in rows
    unknown = inspector.locator(".mha-heat__tok--unk")
    assert unknown.count() == 1 and unknown.inner_text().startswith("zorblax")
    # opened where the learner is: focused, its title on screen
    assert page.evaluate("() => document.activeElement.id") == "mha-compare-inspector-title"
    top = page.evaluate("() => document.getElementById('mha-compare-inspector-title').getBoundingClientRect().top")
    assert 0 <= top < 700, top
    page.keyboard.press("Escape")
    assert inspector.is_hidden()
    assert page.evaluate("() => document.activeElement.dataset.step") == "0"
    assert button.get_attribute("aria-pressed") is None


FIELD_CASES = [
    # (field id, text, what the message must say)
    ("seed", "12345678901234567890", "too large"),
    ("seed", "2.5", "whole number"),
    ("temperature", "100", "from 0 to 5"),
    ("temperature", "-1", "from 0 to 5"),
    ("tokens", "65", "from 1 to 64"),
]


def test_bad_settings_are_refused_with_a_message_tied_to_the_field(make_page, base_url):
    page, _ = make_page()
    open_compare(page, base_url, "?backend=wasm")
    for key, text, says in FIELD_CASES:
        page.fill(f"#mha-compare-{key}", text)
        assert page.evaluate("() => window.mhaCompare.run()") is None, (key, text)
        message = page.locator(f"#mha-compare-{key}-msg")
        assert message.is_visible() and says in message.inner_text(), (key, text, message.inner_text())
        assert message.inner_text()[0].isupper()
        field = page.locator(f"#mha-compare-{key}")
        assert f"mha-compare-{key}-msg" in field.get_attribute("aria-describedby").split()
        assert field.get_attribute("aria-invalid") == "true"
        page.fill(f"#mha-compare-{key}", {"seed": "11", "temperature": "0", "tokens": "2"}[key])
        field.blur()  # the change event clears the message
        assert not message.is_visible(), key
    # text the number field cannot read ("abc") is refused, not taken as greedy
    page.evaluate("() => { document.getElementById('mha-compare-temperature').value = 'abc'; }")
    assert page.evaluate("() => window.mhaCompare.run({maxNewTokens: 2})") is None
    assert "Temperature must be a number" in page.inner_text("#mha-compare-temperature-msg")
    assert (
        page.evaluate("() => window.mhaCompare.run({maxNewTokens: 2, temperature: 0.5, seed: 4294967295})") is not None
    )


def test_cards_show_the_running_checkpoint_and_the_spread(make_page, base_url, load_asset):
    evidence = load_asset("evidence.json")
    seed = evidence["preset"]["seed"]
    page, _ = make_page()
    open_compare(page, base_url)
    for name in MODELS:
        facts = page.inner_text(f"{_col(name)} .mha-col__facts")
        run = next(r for r in evidence["runs"] if r["model"] == name and r["seed"] == seed)
        agg = evidence["aggregates"][name]
        assert f"Test perplexity {run['test_perplexity']:.2f} (this seed-{seed} model)" in facts, facts
        assert (
            f"{agg['perplexity_mean']:.1f} ± {agg['perplexity_sd']:.1f} over {agg['runs']} seeds (mean ± SD)" in facts
        ), facts


def test_leaving_during_a_run_removes_the_hook(make_page, servers):
    page, watch = make_page()
    page.set_default_timeout(60000)
    page.goto(servers["subpath"] + "compare/")
    assert page.evaluate(WAIT_READY_JS)["ok"]
    page.evaluate("() => { window.mhaCompare.run({maxNewTokens: 64}); }")
    page.locator(".mha-token[data-step]").first.wait_for()
    page.get_by_role("link", name="Home").first.click()
    page.wait_for_function("() => !window.mhaCompare")
    assert page.locator(".mha-compare").count() == 0
    assert not watch.page_errors


def _axe_source() -> Path | None:
    for candidate in (os.environ.get("MHA_AXE_JS"), ROOT / "node_modules/axe-core/axe.min.js"):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_serious_violations_with_everything_open(make_page, base_url, scheme):
    axe = _axe_source()
    if axe is None:
        pytest.skip("axe-core is not installed in node_modules (package.json pins it)")
    page, _ = make_page(color_scheme=scheme)
    open_compare(page, base_url, "?backend=wasm")
    page.evaluate("() => window.mhaCompare.run({prompt: 'Tom saw a zorblax. He', maxNewTokens: 3})")
    page.locator(f"{_col('four_heads')} .mha-token[data-step]").first.click()
    page.locator("table.mha-heat").wait_for()
    page.fill("#mha-compare-seed", "12345678901234567890")
    page.evaluate("() => window.mhaCompare.run()")  # shows a field message
    page.add_script_tag(path=str(axe))
    result = page.evaluate("""() => axe.run(document.querySelector('.mha-compare'),
        { resultTypes: ['violations'] })""")
    bad = [
        (v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    assert not bad, bad


def test_number_fields_show_a_focus_ring(make_page, base_url):
    page, _ = make_page()
    open_compare(page, base_url)
    page.focus("#mha-compare-prompt")
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.id") == "mha-compare-tokens"
    style = page.evaluate("""() => { const s = getComputedStyle(document.activeElement);
        return [s.outlineStyle, parseFloat(s.outlineWidth)]; }""")
    assert style[0] != "none" and style[1] >= 2, style


def test_a_runtime_that_does_not_load_is_said_once(make_page, base_url):
    """The status line keeps the failure (no download progress over it) and one alert says it in words."""
    page, _ = make_page(allow_console=(r"Failed to load resource", r"Failed to fetch dynamically imported module"))
    page.route(route_pattern("vendor/ort/ort.wasm.min.mjs"), lambda route: route.fulfill(status=404, body="gone"))
    state = open_compare(page, base_url, "?backend=wasm")
    assert state["ok"] is False
    alerts = page.locator(".mha-compare__alerts .mha-panel--error")
    assert alerts.count() == 1
    assert "runtime did not load" in alerts.inner_text() and "Reload" in alerts.inner_text()
    # the model downloads go on after the failure; once they are done the status must still say it
    page.wait_for_function(r"""() => performance.getEntriesByType('resource')
        .filter((e) => /\.onnx(\?|$)/.test(e.name) && e.responseEnd > 0).length === 3""")
    status = page.inner_text(".mha-compare__status")
    assert "Downloading" not in status and "runtime did not load" in status, status
    assert page.get_by_role("button", name="Generate").is_disabled()
