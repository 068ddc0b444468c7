"""The compare page's inspector: one colour scale for every heatmap column, and "Continue" samples like the column.

* Colours: a cell's background is the viridis colour of its own weight
  (runtime/colormap.js on the percentage shown, within the rounding of that
  percentage), never rescaled to its column's largest weight; a legend says
  the scale (0 % to 100 %).
* Under sampling (temperature 1, seed 7), "Continue" from a step of the
  four-head column writes, with all heads on, the column's own continuation
  from that step (the same sampler draws), beside the story without the
  switched-off head.
"""

from __future__ import annotations


import pytest

from tests.browser.test_accessibility_every_page import _audit
from tests.browser_util import open_compare

pytestmark = pytest.mark.browser

BLOCK = ".mha-knock__model[data-model='four_heads']"


def test_heatmap_colours_use_one_scale_with_a_legend(make_page, base_url):
    page, watch = make_page(viewport={"width": 1280, "height": 900})
    open_compare(page, base_url, "?backend=wasm")
    page.evaluate("() => window.mhaCompare.run({prompt: 'Lily found a ball. She', maxNewTokens: 2})")
    page.evaluate("() => window.mhaCompare.select('four_heads', 1)")
    inspector = page.locator(".mha-compare__inspector")
    inspector.locator("table.mha-heat").wait_for()
    legend = inspector.locator(".mha-heat__legend")
    assert legend.is_visible() and legend.inner_text().split() == ["0", "%", "100", "%"]
    assert "one scale for every column" in inspector.locator(".mha-heat__note").inner_text()
    off = page.evaluate("""async () => {
      const { viridis } = await import(new URL('js/runtime/colormap.js', document.baseURI.replace(/compare\\/.*$/, '')).href);
      const worst = [];
      for (const td of document.querySelectorAll('.mha-compare__inspector td.mha-heat__cell')) {
        const pct = Number(td.textContent);
        const got = td.style.background.match(/\\d+/g).map(Number);
        // the shown percentage is rounded: the weight lies within half a point of it
        const lo = viridis(Math.max(0, pct - 0.5) / 100), hi = viridis(Math.min(100, pct + 0.5) / 100);
        const d = Math.max(...got.map((c, k) => Math.max(0, Math.min(lo[k], hi[k]) - c - 1, c - Math.max(lo[k], hi[k]) - 1)));
        worst.push([d, pct, got]);
      }
      return worst.sort((a, b) => b[0] - a[0]).slice(0, 3);
    }""")
    assert off and off[0][0] == 0, f"cells coloured off their own weight (per-column scaling?): {off}"
    watch.check()


def test_continue_with_sampling_reproduces_the_columns_own_story(make_page, base_url, load_asset):
    preset = load_asset("evidence.json")["heads"]["preset"]
    page, watch = make_page(viewport={"width": 1280, "height": 900})
    open_compare(page, base_url, "?backend=wasm")
    k = 2
    run = page.evaluate(
        "(p) => window.mhaCompare.run({prompt: p, maxNewTokens: 10, temperature: 1, seed: 7})", preset["prompt"]
    )
    column = run["results"]["four_heads"]["ids"]
    assert len(column) > k
    page.evaluate(f"() => window.mhaCompare.select('four_heads', {k})")
    block = page.locator(BLOCK)
    block.locator("input[type=checkbox]").first.wait_for()
    block.locator("label[data-head='1']").click()
    page.wait_for_function(f"() => document.querySelector(\"{BLOCK}\").dataset.mask === '0111'")
    block.locator(".mha-knock__continue").click()
    page.wait_for_function(f"() => document.querySelector(\"{BLOCK}\").dataset.story === 'done'")
    full = [int(i) for i in block.locator(".mha-knock__story--full").get_attribute("data-ids").split()]
    rest = column[k:]
    assert full[: len(rest)] == rest, (full, rest)
    watch.check()


def test_top_tokens_of_every_model_share_one_bar_scale_that_is_said(make_page, base_url):
    # Each list once scaled its bars to its own top token, so one head's 7.8 % drew as long as the MLP's 39.4 %.
    page, watch = make_page(viewport={"width": 1280, "height": 900})
    open_compare(page, base_url, "?backend=wasm")
    page.evaluate("() => window.mhaCompare.run({prompt: 'Lily found a ball. She', maxNewTokens: 2})")
    page.evaluate("() => window.mhaCompare.select('four_heads', 1)")
    tops = page.locator(".mha-compare__inspector .mha-topk")
    tops.locator(".mha-topk__model").nth(2).wait_for()
    bars = page.evaluate("""() => [...document.querySelectorAll('.mha-compare__inspector .mha-topk__model')].map((m) =>
      [...m.querySelectorAll('.mha-topk__list li')].map((li) => {
        const track = li.querySelector('.mha-topk__bar').getBoundingClientRect().width;
        return [parseFloat(li.querySelector('.mha-topk__p').textContent) / 100,
                li.querySelector('.mha-topk__bar span').getBoundingClientRect().width / track];
      }))""")
    assert len(bars) == 3 and all(len(b) == 5 for b in bars), bars
    firsts = [b[0][0] for b in bars]
    assert max(firsts) > 1.5 * min(firsts), f"the models agree too closely here to test a shared scale: {firsts}"
    top = max(firsts)
    for model in bars:
        for p, frac in model:
            # shown to 0.1 %, and a bar is never drawn under 1 % of its track
            assert abs(frac - max(p / top, 0.01)) <= 0.0005 / top + 0.01, (p, frac, top, bars)
    scale = tops.locator(".mha-topk__scale")
    assert scale.is_visible(), "the shared scale is not said"
    assert f"{top * 100:.1f}%" in scale.inner_text(), scale.inner_text()
    assert not _audit(page), "the inspector has accessibility violations"
    watch.check()
