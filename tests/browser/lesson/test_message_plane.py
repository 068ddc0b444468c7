"""Page 1's plane of messages (site_src/js/lesson/message_plane.js) in headless Chromium.

Drags the handles with the mouse and moves them with the keyboard, in both
modes, and checks that the target message is reached only with two heads;
the numbers are two_source.js's toy (river [10, 1], fisherman [2, 8]).
Also runs axe-core on the widget in light and dark mode at phone width.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[3]
AXE = ROOT / "node_modules/axe-core/axe.min.js"
PAGE1 = "lesson/1-why-more-heads/"
RIVER, FISHER = [10, 1], [2, 8]
TARGET = [0.8 * 10 + 0.2 * 2, 0.2 * 1 + 0.8 * 8]  # the toy's two-head answer: [8.4, 6.6]


def _centre(locator) -> tuple[float, float]:
    box = locator.bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def _open(make_page, base_url, **context):
    page, watch = make_page(**context)
    page.set_default_timeout(20000)
    page.goto(base_url + PAGE1)
    page.wait_for_selector(".mha-mp [data-handle='one']")
    page.locator(".mha-mp").scroll_into_view_if_needed()
    return page, watch


class Plane:
    def __init__(self, page):
        self.page = page
        self.root = page.locator("[data-mha-widget='message_plane']")
        self.sources = self.root.locator("circle.mha-mp__source")

    # Measured at each use: focusing a handle may scroll the page.
    @property
    def river(self):
        return _centre(self.sources.nth(0))

    @property
    def fisher(self):
        return _centre(self.sources.nth(1))

    def screen(self, w: float) -> tuple[float, float]:
        """Where the point with weight w on river lies on the screen (the picture is affine)."""
        river, fisher = self.river, self.fisher
        return tuple(f + w * (r - f) for r, f in zip(river, fisher))

    def at(self, x: float, y: float) -> tuple[float, float]:
        """Where the message [x, y] lies on the screen (axes scale linearly)."""
        river, fisher = self.river, self.fisher
        bx = (river[0] - fisher[0]) / (RIVER[0] - FISHER[0])
        by = (river[1] - fisher[1]) / (RIVER[1] - FISHER[1])
        return fisher[0] + bx * (x - FISHER[0]), fisher[1] + by * (y - FISHER[1])

    def drag(self, locator, to: tuple[float, float]) -> None:
        self.page.mouse.move(*_centre(locator))
        self.page.mouse.down()
        start = _centre(locator)
        for k in range(1, 6):  # several moves, as a hand would make
            self.page.mouse.move(start[0] + (to[0] - start[0]) * k / 5, start[1] + (to[1] - start[1]) * k / 5)
        self.page.mouse.up()

    def handle(self, key):
        return self.root.locator(f"[data-handle='{key}']")

    def w(self, key) -> float:
        return float(self.handle(key).get_attribute("data-w"))

    def reached(self) -> bool:
        return self.root.get_attribute("data-reached") == "true"

    def message(self) -> list[float]:
        return json.loads(self.root.get_attribute("data-message"))

    def status(self) -> str:
        return self.root.locator("[data-mp='status']").inner_text()


def _mix(w):
    return [w * r + (1 - w) * f for r, f in zip(RIVER, FISHER)]


def test_target_reached_only_with_two_heads_mouse_and_keyboard(make_page, base_url):
    page, _ = _open(make_page, base_url)
    p = Plane(page)
    assert p.root.get_attribute("data-mode") == "one"
    assert p.w("one") == pytest.approx(0.8) and p.message() == pytest.approx([8.4, 2.4])
    assert not p.reached() and p.status().startswith("Not reached")

    # One head, mouse: drag the handle to the point of weight 0.3, then right onto the target.
    p.drag(p.handle("one"), p.screen(0.3))
    assert p.w("one") == pytest.approx(0.3)
    assert p.message() == pytest.approx(_mix(0.3))
    p.drag(p.handle("one"), p.at(*TARGET))  # the handle stays on the line: the closest weight, not the target
    assert not p.reached()
    assert p.message() == pytest.approx(_mix(p.w("one")))
    positions = p.root.locator("[data-mp='positions']").inner_text()
    assert "[10, 1]" in positions and "[2, 8]" in positions and "[8.4, 6.6]" in positions

    # One head, keyboard: every weight from 0 to 1 in steps of 0.05; none reaches the target.
    p.handle("one").focus()
    page.keyboard.press("Home")
    assert p.w("one") == 0
    for step in range(1, 21):
        page.keyboard.press("ArrowRight")
        assert p.w("one") == pytest.approx(step * 0.05)
        assert p.message() == pytest.approx(_mix(step * 0.05))
        assert not p.reached()
    assert p.handle("one").get_attribute("aria-valuetext").startswith("river 1, fisherman 0")

    # Two heads (chosen with the keyboard): both start where the one head was.
    p.handle("one").focus()
    page.keyboard.press("ArrowLeft")  # 0.95
    page.locator(".mha-mp input[data-mode='one']").focus()
    page.keyboard.press("ArrowRight")  # radio group: selects "two"
    assert p.root.get_attribute("data-mode") == "two"
    assert p.w("setting") == p.w("person") == pytest.approx(0.95)
    assert not p.handle("one").is_visible()

    # (Choosing with the keyboard may have scrolled the radios into view and the picture's foot out of it.)
    p.root.locator("svg").scroll_into_view_if_needed()
    # While they coincide both show, the setting head's dot a rim around the person head's: pressing the
    # centre takes the person head, pressing the rim the setting head.
    taken = page.evaluate("""() => {
      const svg = document.querySelector(".mha-mp__svg");
      const unit = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      const c = document.querySelector(".mha-mp [data-handle='person'] .mha-mp__dot").getBoundingClientRect();
      const x = c.x + c.width / 2, y = c.y + c.height / 2;
      const at = (d) => document.elementFromPoint(x + d * unit, y)?.closest("[data-handle]")?.dataset.handle;
      return [at(0), at(10)];
    }""")
    assert taken == ["person", "setting"]
    assert "one spot" in p.status()

    # Two heads, mouse: the person head (on top while they coincide) to 0.2, the setting head to 0.8.
    p.drag(p.handle("person"), p.screen(0.2))
    assert p.w("person") == pytest.approx(0.2) and not p.reached()
    assert p.w("setting") == pytest.approx(0.95)
    p.drag(p.handle("setting"), p.screen(0.8))
    assert p.w("setting") == pytest.approx(0.8)
    assert p.message() == pytest.approx(TARGET)
    assert p.reached() and p.status().startswith("Target reached")

    # Two heads, keyboard: one step away and back.
    p.handle("person").focus()
    page.keyboard.press("ArrowRight")
    assert p.w("person") == pytest.approx(0.25) and not p.reached()
    assert p.status().startswith("Not yet")
    page.keyboard.press("ArrowLeft")
    assert p.reached()

    # Two heads, mouse on the combined point: away, then onto the target.
    combined = p.root.locator("[data-mp='combined']")
    p.drag(combined, p.at(4, 3))  # off the line, so the handles do not cover the point afterwards
    assert (p.w("setting"), p.w("person")) == pytest.approx((0.25, 5 / 7), abs=0.03)
    assert not p.reached()
    p.drag(combined, p.at(*TARGET))
    assert p.reached() and p.message() == pytest.approx(TARGET)

    # Back to one head: its message is on the line again, and the target is not.
    page.locator(".mha-mp input[data-mode='one']").check()
    assert p.root.get_attribute("data-mode") == "one" and not p.reached()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_plane_fits_a_phone_and_passes_axe(make_page, base_url, scheme):
    page, _ = _open(make_page, base_url, viewport={"width": 390, "height": 844}, color_scheme=scheme)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    box = page.locator(".mha-mp__svg").bounding_box()
    assert box["width"] <= 390 and box["height"] > 200
    if not AXE.is_file():
        pytest.fail(f"{AXE.relative_to(ROOT)} is missing: run `npm ci`")
    page.add_script_tag(content=AXE.read_text())
    found = page.evaluate("""async () => {
      const r = await axe.run(document.querySelector('.mha-mp'), { resultTypes: ['violations'] });
      return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id);
    }""")
    assert found == []


# Every label of the plane as drawn (the picture's text and the legend under it) and every mark a label
# could hide (each visible handle as painted, its focus ring or outline included; the combined point), for
# every weight the handles offer (steps of 0.05), with one handle focused from the keyboard: the pairs of
# labels whose boxes intersect, and the labels that meet a mark. Both heads on river with one of them
# focused was such a state: the focus outline ran through "setting head" and "river [10, 1]".
_CROSSING_LABELS_JS = """async (mode) => {
  const root = document.querySelector("[data-mha-widget='message_plane']");
  const focused = document.activeElement.closest('[data-handle]');
  if (!focused || !focused.matches(':focus-visible')) throw new Error('no handle has keyboard focus');
  const key = (h, k, n = 1) => { for (let i = 0; i < n; i++) root.querySelector(`[data-handle='${h}']`)
    .dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true })); };
  const shown = (n) => n.getClientRects().length && n.getBoundingClientRect().width > 0
    && n.checkVisibility({ visibilityProperty: true, opacityProperty: true });
  const labels = () => [...root.querySelectorAll('svg text, .mha-mp__legend li')]
    .filter((t) => t.textContent.trim() && shown(t))
    .map((t) => [t.textContent.trim(), t.getBoundingClientRect()]);
  const grown = (r, d) => new DOMRect(r.x - d, r.y - d, r.width + 2 * d, r.height + 2 * d);
  const marks = () => {
    const out = [];
    for (const h of root.querySelectorAll('[data-handle]')) {
      if (!shown(h)) continue;
      // the focus ring counts where it would show, so that one handle focused stands for either
      for (const c of h.children) if (!c.matches('.mha-mp__hit') && (shown(c) || c.matches('.mha-mp__ring'))) out.push([`${h.dataset.handle} handle`, c.getBoundingClientRect()]);
      const cs = getComputedStyle(h);
      if (h.matches(':focus-visible') && cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) > 0) {
        out.push([`${h.dataset.handle} handle's outline`, grown(h.getBoundingClientRect(), parseFloat(cs.outlineOffset) + parseFloat(cs.outlineWidth))]);
      }
    }
    const combined = root.querySelector('[data-mp=combined]');
    if (shown(combined)) out.push(['combined point', combined.getBoundingClientRect()]);
    return out;
  };
  const meet = (p, q) => p.left < q.right && q.left < p.right && p.top < q.bottom && q.top < p.bottom;
  const crossing = new Set();
  let seen = 0;
  const heads = mode === 'two' ? ['setting', 'person'] : ['one'];
  const at = (h, k) => { key(h, 'Home'); key(h, 'ArrowRight', k); };
  for (let a = 0; a <= 20; a++) for (let b = 0; b <= (mode === 'two' ? 20 : 0); b++) {
    at(heads[0], a);
    if (mode === 'two') at(heads[1], b);
    const boxes = labels();
    const where = `(weights ${a / 20}, ${b / 20}; ${focused.dataset.handle} focused)`;
    seen = Math.max(seen, boxes.length);
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      if (meet(boxes[i][1], boxes[j][1])) crossing.add(`${boxes[i][0]} | ${boxes[j][0]} ${where}`);
    }
    for (const [name, box] of marks()) for (const [text, lbox] of boxes) {
      if (meet(box, lbox)) crossing.add(`${text} | ${name} ${where}`);
    }
  }
  return { seen, crossing: [...crossing].slice(0, 12) };
}"""


@pytest.mark.parametrize("width", [1280, 390])
def test_no_two_labels_overlap_wherever_the_heads_are(make_page, base_url, width):
    """The head tags move with their handles: in two-head mode (the person head focused from the keyboard,
    as in the review's picture) and in one-head mode, at every weight the handles offer, no label's box meets another's or a handle's
    painted mark (its dot, its focus ring), at 1280 and 390 px."""
    page, watch = _open(make_page, base_url, viewport={"width": width, "height": 900})
    plane = Plane(page)
    for mode, focus in (("two", "person"), ("one", "one")):
        page.locator(f".mha-mp input[data-mode='{mode}']").check()
        plane.handle(focus).focus()  # a script's focus would not show the keyboard's focus ring:
        page.keyboard.press("ArrowRight")  # a key press makes it the keyboard's
        found = page.evaluate(_CROSSING_LABELS_JS, mode)
        # the ticks, the axis titles, river, fisherman, the target, the head tags and the legend
        assert found["seen"] >= (20 if mode == "two" else 18), found
        assert not found["crossing"], f"{mode} heads at {width} px: {found['crossing']}"
    # the tags still sit by their handles: the setting head's tag within a few lines of its dot
    tag = page.locator(".mha-mp text", has_text="one head").bounding_box()
    dot = page.locator("[data-handle='one'] .mha-mp__dot").bounding_box()
    assert abs(tag["y"] - dot["y"]) < 80 and abs(tag["x"] - dot["x"]) < 200, (tag, dot)
    watch.check()
