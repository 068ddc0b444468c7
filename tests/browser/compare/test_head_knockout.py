"""Head knock-out in the browser: every head mask on WebAssembly, and the inspector's head switches."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import numpy as np
import pytest

from export.onnx_export import PARITY_TOL, all_head_masks, ort_logits, session
from tests.browser_util import open_compare

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("require_models")]
HEADS = {"one_head": 1, "four_heads": 4}


def test_every_head_mask_matches_onnxruntime_for_python_on_wasm(make_page, base_url, load_asset, assets_dir):
    """All 16 masks of the four-head model (and both of the one-head model) on the parity prompts."""
    parity = load_asset("parity.json")
    windows = np.asarray([p["window"] for p in parity["prompts"]], dtype=np.int64)
    page, _ = make_page()
    state = open_compare(page, base_url, "?backend=wasm")
    assert state["ok"] and state["backends"]["four_heads"] == "wasm", state
    for name, heads in HEADS.items():
        sess = session((assets_dir / f"models/{name}.onnx").read_bytes())
        for mask in all_head_masks(heads):
            want = ort_logits(sess, windows, head_mask=mask)
            got = np.asarray(
                page.evaluate(
                    """async ([n, ws, m]) => {
                const out = [];
                for (const w of ws) out.push(Array.from(await window.mhaCompare.logitsForWindow(n, w, {headMask: m})));
                return out; }""",
                    [name, windows.tolist(), mask],
                )
            )
            assert got.shape == want.shape
            diff = float(np.abs(got - want).max())
            assert diff <= PARITY_TOL, (name, mask, diff)
        default = np.asarray(
            page.evaluate(
                "async ([n, w]) => Array.from(await window.mhaCompare.logitsForWindow(n, w))",
                [name, windows[0].tolist()],
            )
        )
        # no mask = all ones, exactly
        assert np.array_equal(
            default,
            np.asarray(
                page.evaluate(
                    "async ([n, w, m]) => Array.from(await window.mhaCompare.logitsForWindow(n, w, {headMask: m}))",
                    [name, windows[0].tolist(), [1.0] * heads],
                )
            ),
        )


def _open_preset_inspector(page, base_url):
    open_compare(page, base_url, "?backend=wasm")
    page.evaluate("() => window.mhaCompare.run()")  # the preset: 24 tokens, which Continue also writes
    page.locator(".mha-col[data-model='four_heads'] .mha-token[data-step='0']").click()
    block = page.locator(".mha-knock__model[data-model='four_heads']")
    block.wait_for()
    return block


def _shown(block, mask: str):
    block.page.wait_for_function(
        "([sel, m]) => { const b = document.querySelector(sel); return b && b.dataset.mask === m && b.dataset.state === 'shown'; }",
        arg=[".mha-knock__model[data-model='four_heads']", mask],
    )


def _top5(block, kind: str) -> list[tuple[str, float]]:
    items = block.locator(f".mha-knock__list--{kind} li")
    out = []
    for i in range(items.count()):
        item = items.nth(i)
        p = float(re.match(r"([\d.]+)%", item.locator(".mha-topk__p").inner_text()).group(1))
        out.append((int(item.get_attribute("data-id")), p))
    return out


def test_head_switches_by_mouse_and_keyboard_match_python(make_page, base_url, load_asset):
    evidence = load_asset("evidence.json")
    preset = evidence["heads"]["preset"]
    page, _ = make_page()
    block = _open_preset_inspector(page, base_url)
    boxes = block.locator("input[type=checkbox]")
    assert boxes.count() == 4 and all(boxes.nth(i).is_checked() for i in range(4))
    assert page.locator(".mha-knock__model[data-model='one_head'] input[type=checkbox]").count() == 1
    full = [(t["id"], round(100 * t["p"], 1)) for t in preset["all"]["top5"]]
    assert [i for i, _ in _top5(block, "full")] == [i for i, _ in full]

    # Mouse: switch head 2 off, then on again.
    block.locator("label[data-head='2']").click()
    _shown(block, "1011")
    want = preset["without_2"]["top5"]
    got = _top5(block, "masked")
    assert [i for i, _ in got] == [t["id"] for t in want]
    assert all(abs(p - 100 * t["p"]) <= 0.051 for (_, p), t in zip(got, want))
    summary = block.locator(".mha-knock__summary").inner_text()
    assert summary.startswith("Without head 2, the most likely next token")
    block.locator("label[data-head='2']").click()
    _shown(block, "1111")
    assert block.locator(".mha-knock__list--masked").count() == 0
    assert block.locator(".mha-knock__continue").is_disabled()

    # Keyboard: Tab to head 4's switch, Space turns it off, Enter on Continue writes both stories.
    boxes.nth(2).focus()
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.dataset.head") == "4"
    page.keyboard.press("Space")
    _shown(block, "1110")
    assert [i for i, _ in _top5(block, "masked")] == [t["id"] for t in preset["without_4"]["top5"]]
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.classList.contains('mha-knock__continue')")
    assert page.evaluate("() => document.activeElement.textContent") == "Continue without head 4"
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector(\".mha-knock__model[data-model='four_heads']\").dataset.story === 'done'"
    )
    full_ids = [int(i) for i in block.locator(".mha-knock__story--full").get_attribute("data-ids").split()]
    masked_ids = [int(i) for i in block.locator(".mha-knock__story--masked").get_attribute("data-ids").split()]
    assert full_ids == evidence["preset"]["continuations"]["four_heads"]["ids"] == preset["all"]["continuation"]["ids"]
    assert masked_ids == preset["without_4"]["continuation"]["ids"]
    first_diff = next(i for i, (a, b) in enumerate(zip(full_ids, masked_ids)) if a != b)
    assert block.locator(".mha-knock__story--masked mark").count() >= 1
    assert f"part at token {first_diff + 1}" in block.locator(".mha-knock__note").inner_text()


def test_atlas_link_opens_the_clearest_window_in_the_inspector(make_page, base_url, built_site, load_asset):
    heads = load_asset("evidence.json")["heads"]
    head = max(heads["atlas"]["four_heads"]["heads"], key=lambda h: h["clearest"]["share"])
    page5 = (built_site / "lesson/how-measured/index.html").read_text()  # the atlas lives on the appendix
    import html

    links = [html.unescape(h) for h in re.findall(r'href="\.\./\.\./(compare/\?[^"]+)"', page5)]
    link = next(
        l
        for l in links
        if f"head={head['head']}" in l
        and "inspect=four_heads" in l
        and "&" in l
        and head["clearest"]["prompt"].split()[-1] in l.replace("+", " ")
    )
    page, _ = make_page()
    page.set_default_timeout(60000)
    page.goto(base_url + link)
    page.locator(".mha-knock__toggle--focus").wait_for()
    assert page.evaluate("() => document.activeElement.dataset.head") == str(head["head"])
    window = page.evaluate("(t) => window.mhaCompare.window(t)", head["clearest"]["prompt"])
    itos = load_asset("vocab.json")["itos"]
    assert [itos[i] for i in window if i != 0] == head["clearest"]["tokens"]
    rows = page.locator(".mha-compare__inspector table.mha-heat tbody tr").count()
    assert rows == len(head["clearest"]["tokens"])
    assert urlsplit(page.url).query  # the link's query stays, so the view can be shared


def test_head_switches_at_phone_width_in_dark_mode(make_page, base_url):
    page, _ = make_page(viewport={"width": 390, "height": 800}, color_scheme="dark")
    block = _open_preset_inspector(page, base_url)
    block.locator("label[data-head='1']").click()
    _shown(block, "0111")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    box = block.locator("label[data-head='1']").bounding_box()
    assert box["height"] >= 24 and box["width"] >= 24  # a comfortable touch target
