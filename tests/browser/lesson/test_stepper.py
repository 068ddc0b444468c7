"""Page 4's forward-pass stepper in Chromium: typed prompt, every step by keyboard, tensors, predict-then-reveal.

The tensors the browser shows come from onnxruntime-web running the teaching
graph; here they are compared with PyTorch's forward_full on the same compact
weights (tests/tolerance.py), the window's ids exactly. Also: nothing loads
before the learner opens it, the compare page's inspector opens it with its
prompt and model, a missing or damaged file is said once in words while the
page keeps working, and axe-core finds no serious violation in it.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
import torch

from export.artefacts import Artefacts
from export.checkpoints import load_compact
from export.generate import prompt_history
from export.teaching_graph import OUTPUTS, forward_full_outputs
from export.windows import context_window
from tests.browser_util import open_compare
from tests.site_paths import route_pattern
from tests.tolerance import assert_close_array

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[3]
PAGE4 = "lesson/4-model-training-generation/"
KEYS = ["tokens", "E", "qkv", "scores", "mask", "A", "AV", "concat", "wo", "residual", "hidden", "vocab"]
ART = Artefacts()


def _open(page, base_url, prompt=None, model=None, query=""):
    page.set_default_timeout(90000)
    page.goto(base_url + PAGE4 + query)
    page.locator(".mha-st__form").wait_for()
    if model:
        page.check(f".mha-st__models input[value='{model}']")
    if prompt is not None:
        page.fill(".mha-st__input", prompt)
        page.press(".mha-st__input", "Enter")
    return _ready(page)


def _ready(page):
    page.wait_for_function("() => window.mhaStepper")
    return page.evaluate("async () => { await window.mhaStepper.ready; return window.mhaStepper.state(); }")


def _reference(name: str, prompt: str):
    torch.set_num_threads(1)
    vocab = json.loads(ART.vocab.read_text())
    window = context_window(prompt_history(vocab["itos"], prompt), vocab["T"])
    model = load_compact(ART.checkpoint(name)).eval()
    return window, forward_full_outputs(model, window)


def _compare_all(page, name, prompt):
    """Every tensor the browser holds against PyTorch's forward_full; returns the reference window."""
    window, ref = _reference(name, prompt)
    assert page.evaluate("window.mhaStepper.state().ids") == window
    got = page.evaluate("window.mhaStepper.tensors()")
    assert sorted(got) == sorted(OUTPUTS)
    for k in OUTPUTS:
        data = np.asarray(got[k]["data"]).reshape(got[k]["dims"])
        if k == "mask":
            assert np.array_equal(data.astype(bool), ref[k]), k
        else:
            assert_close_array(data.astype(np.float32), ref[k], name=f"{name} {k}")
    return window, got


def _check_step(page, key):
    assert page.evaluate("window.mhaStepper.state().key") == key
    panel = page.locator(".mha-st__panel")
    assert panel.get_attribute("data-step") == key
    assert panel.locator(".mha-st__shape code").inner_text().strip()
    assert len(panel.locator(".mha-st__sentence").inner_text()) > 40
    assert panel.locator(".mha-st__map .mha-fig__link--here").count() >= 1, key
    assert panel.locator(".mha-st__listing").count() >= 1 and panel.locator(".mha-st__missing").count() == 0, key
    listing = panel.locator(".mha-st__listing pre code").first.inner_text()
    assert "# lesson" not in listing
    assert len(panel.locator(".mha-st__picture").get_attribute("aria-label") or "") > 20, key


def test_typed_prompt_walks_every_step_by_keyboard_with_pytorch_numbers(make_page, base_url):
    page, watch = make_page(viewport={"width": 1280, "height": 900})
    page.goto(base_url + PAGE4)
    page.locator(".mha-st__form").wait_for()
    page.wait_for_load_state("networkidle")
    # loaded only when the learner opens it
    assert not [u for u in watch.requests if ".onnx" in u or "/vendor/ort/" in u or "stepper_code" in u]
    prompt = "The zorblax found a shiny red"
    state = _open(page, base_url, prompt=prompt)
    window, got = _compare_all(page, "four_heads", prompt)
    assert state["model"] == "four_heads" and state["steps"] == len(KEYS)
    # tokens: BOS and the unknown word are marked
    assert page.locator(".mha-st__chip--bos").count() == 1
    assert page.locator(".mha-st__chip--unk").inner_text().startswith("zorblax")
    # the focus is in the stepper after opening: the arrows walk it
    assert page.evaluate("() => document.querySelector('.mha-st__panel').contains(document.activeElement)")
    _check_step(page, KEYS[0])
    A = np.asarray(got["A"]["data"]).reshape(got["A"]["dims"])
    real = [s for s, i in enumerate(window) if i != 0]
    for key in KEYS[1:]:
        page.keyboard.press("ArrowRight")
        if key == "A":
            assert page.locator(".mha-st__picture canvas").count() == 0  # hidden before the guess
            tops = [int(np.argmax(A[0, h, -1, real])) for h in range(4)]
            page.locator(".mha-st__pick select").nth(0).select_option(str(tops[0]))  # right
            page.locator(".mha-st__pick select").nth(1).select_option(str((tops[1] + 1) % len(real)))  # wrong
            page.get_by_role("button", name="Reveal the weights").click()
            verdicts = page.locator(".mha-st__verdict")
            assert [verdicts.nth(h).get_attribute("data-verdict") for h in range(4)] == [
                "right",
                "wrong",
                "none",
                "none",
            ]
            assert "right" in verdicts.nth(0).inner_text()
            wrong = verdicts.nth(1).inner_text()
            assert f"{A[0, 1, -1, real[tops[1]]]:.2f}" in wrong
            assert page.locator(".mha-st__picture canvas").count() == 4
            if any(window[real[t]] == 1 for t in tops):
                assert "must add up to 1" in page.locator(".mha-st__sentence").inner_text()
        _check_step(page, key)
    page.keyboard.press("ArrowRight")  # at the end: stays
    _check_step(page, KEYS[-1])
    for key in reversed(KEYS[:-1]):
        page.keyboard.press("ArrowLeft")
        _check_step(page, key)
    assert page.locator(".mha-st__panel button", has_text="Back").is_disabled()


# The map's band, as frameMap() computes it: the viewBox against the marked boxes,
# in the map's own units (getBBox through the groups' transforms), and the width it is drawn at.
_MAP_BAND_JS = """() => {
  const svg = document.querySelector('.mha-st__map svg');
  const [, y, w, h] = svg.getAttribute('viewBox').split(/[\\s,]+/).map(Number);
  const toMap = svg.getScreenCTM().inverse();
  const here = [...svg.querySelectorAll('.mha-fig__link--here')].map((a) => {
    const m = toMap.multiply(a.getScreenCTM()); const b = a.getBBox();
    return [new DOMPoint(b.x, b.y).matrixTransform(m).y, new DOMPoint(b.x, b.y + b.height).matrixTransform(m).y];
  });
  return { y, w, h, here, drawn: svg.getBoundingClientRect().width, full: svg.closest('.mha-st__map').clientWidth };
}"""


@pytest.mark.parametrize("width", [390, 1280])
def test_the_map_is_a_readable_band_around_the_step(make_page, base_url, width):
    """The whole map would be a thumbnail of 5 px text (at 390 px across the phone, at 1280 px in a sidebar):
    it is drawn at a readable scale instead, cropped to the rows of the step's boxes, and it follows each
    step. On a phone it spans the widget."""
    page, _ = make_page(viewport={"width": width, "height": 800})
    _open(page, base_url, prompt="Lily found a")
    whole = page.evaluate("() => document.querySelector('#fig-model-map svg').getAttribute('viewBox')")
    _, _, map_w, map_h = (float(v) for v in whole.split())
    tops = set()
    for key in KEYS:
        band = page.evaluate(_MAP_BAND_JS)
        assert band["here"], key
        assert band["w"] == map_w and band["h"] < map_h / 2, (key, band)
        for top, bottom in band["here"]:
            assert band["y"] - 0.5 <= top and bottom <= band["y"] + band["h"] + 0.5, (key, band)
        # drawn at least 0.96 px a unit, so its 11.5-unit labels are 11 px or more, not 5
        assert band["drawn"] / map_w >= 0.96, (key, band)
        if width < 600:
            assert band["drawn"] >= 0.95 * band["full"], (key, band)
        tops.add(round(band["y"]))
        page.keyboard.press("ArrowRight")
    assert len(tops) >= 4  # it moves with the steps


# Every label the stepper draws, as rendered: the map's SVG text (font size times the SVG's scale on
# screen; a label the band hides is skipped, a shown one must lie wholly inside the band) and the
# heatmaps' canvas labels (their CSS px times the canvas's drawn scale).
_STEPPER_LABELS_JS = """() => {
  const out = [];
  const svg = document.querySelector('.mha-st__map svg');
  const frame = svg.getBoundingClientRect();
  for (const t of svg.querySelectorAll('text')) {
    if (!t.textContent.trim() || getComputedStyle(t).visibility === 'hidden') continue;
    const r = t.getBoundingClientRect();
    if (r.bottom <= frame.top || r.top >= frame.bottom) continue;  // wholly outside the band: not drawn
    const m = t.getScreenCTM();
    out.push({ text: t.textContent.trim(), px: parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b),
               inside: r.top >= frame.top - 0.5 && r.bottom <= frame.bottom + 0.5 });
  }
  for (const c of document.querySelectorAll('.mha-st__panel canvas[data-label-px]')) {
    const drawn = c.getBoundingClientRect().width / parseFloat(c.style.width);
    out.push({ text: 'heatmap labels', px: Number(c.dataset.labelPx) * drawn, inside: true });
  }
  return out;
}"""


@pytest.mark.parametrize("width", [390, 1280])
def test_every_stepper_label_is_at_least_11_px(make_page, base_url, width):
    page, watch = make_page(viewport={"width": width, "height": 844})
    _open(page, base_url, prompt="Lily found a")
    page.locator(".mha-st__title").focus()
    seen, heatmaps = set(), 0
    for key in KEYS:
        if key == "A":
            page.get_by_role("button", name="Reveal the weights").click()
        labels = page.evaluate(_STEPPER_LABELS_JS)
        assert labels, key
        small = [(round(l["px"], 2), l["text"]) for l in labels if l["px"] < 11 - 0.05]
        assert not small, f"{key}: labels below 11 px at {width} px: {small}"
        cut = [l["text"] for l in labels if not l["inside"]]
        assert not cut, f"{key}: labels cut by the map's band: {cut}"
        seen |= {l["text"] for l in labels}
        heatmaps += sum(l["text"] == "heatmap labels" for l in labels)
        page.keyboard.press("ArrowRight")
    assert heatmaps, "no heatmap with labels was measured"
    # the residual route says what it carries in the page's words, and the map's words all showed somewhere
    assert "E, added back" in seen
    assert not page.locator("text=residual: E").count()
    assert {"head 1", "scores", "softmax A"} <= seen
    watch.check()


def test_one_head_append_runs_again_and_long_prompt_crops(make_page, base_url):
    page, _ = make_page(viewport={"width": 390, "height": 800})
    long = " ".join(["Tom and Sam went to the park to play with a big red ball ."] * 6)
    state = _open(page, base_url, prompt=long, model="one_head")
    window, got = _compare_all(page, "one_head", long)
    assert state["model"] == "one_head" and 0 not in window
    assert got["Q"]["dims"] == [1, 1, 64, 64]
    assert "no longer fit" in page.locator(".mha-st__sentence").inner_text()
    page.fill(".mha-st__input", "Lily found a")
    page.press(".mha-st__input", "Enter")
    page.wait_for_function("() => window.mhaStepper.state().ids.filter((i) => i).length === 4")
    _compare_all(page, "one_head", "Lily found a")
    page.locator(".mha-st__title").focus()
    for _ in KEYS[1:]:
        page.keyboard.press("ArrowRight")
    assert page.evaluate("window.mhaStepper.state().key") == "vocab"
    chosen = page.locator(".mha-st__bar--mark .mha-st__bar-label").inner_text()
    page.locator(".mha-st__append").click()
    page.wait_for_function("() => window.mhaStepper.state().ids.filter((i) => i).length === 5")
    assert page.input_value(".mha-st__input").endswith(chosen)
    assert page.evaluate("window.mhaStepper.state().key") == "vocab"
    # nothing sticks out sideways on a phone
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390


def test_the_compare_inspector_opens_the_stepper_with_its_prompt_and_model(make_page, base_url):
    page, _ = make_page(viewport={"width": 1280, "height": 800})
    open_compare(page, base_url, "?backend=wasm")
    page.evaluate("() => window.mhaCompare.run({prompt: 'Tom saw a zorblax in the garden. He', maxNewTokens: 2})")
    page.locator(".mha-col[data-model='one_head'] .mha-token[data-step]").nth(1).click()
    link = page.get_by_role("link", name="Step through this prompt")
    href = link.get_attribute("href")
    query = parse_qs(urlsplit(href).query)
    assert query["model"] == ["one_head"] and query["prompt"][0].startswith("tom saw a zorblax in the garden. he")
    link.click()
    page.wait_for_url("**/" + PAGE4 + "**")
    state = _ready(page)
    assert state["model"] == "one_head"
    assert page.locator(".mha-st__chip--unk").count() == 1


def test_a_model_name_not_in_the_manifest_is_ignored(make_page, base_url):
    page, _ = make_page()
    state = _open(page, base_url, query="?prompt=Lily%20found%20a&model=__proto__")
    assert state["model"] == "four_heads"


@pytest.mark.parametrize("fault", ["missing", "damaged"])
def test_a_missing_or_damaged_teaching_graph_is_said_once(make_page, base_url, fault):
    page, _ = make_page(allow_console=(r"Failed to load resource",))

    def handle(route):
        if fault == "missing":
            route.fulfill(status=404, body="not here")
        else:
            route.fulfill(status=200, body=b"\0" * 27443, headers={"Content-Type": "application/octet-stream"})

    page.route(route_pattern("wasm_assets/models/four_heads.steps.onnx"), handle)
    page.set_default_timeout(60000)
    page.goto(base_url + PAGE4)
    page.fill(".mha-st__input", "Lily found a")
    page.press(".mha-st__input", "Enter")
    problem = page.locator(".mha-st__problem [role=alert]")
    problem.wait_for()
    text = problem.inner_text()
    assert "four_heads.steps.onnx" in text and ("missing" in text if fault == "missing" else "damaged" in text)
    assert "rest of the page works" in text
    assert page.locator(".mha-st__problem [role=alert]").count() == 1
    assert page.locator(".mha-st__panel").is_hidden()
    # the page keeps working: its quiz still answers
    quiz = page.locator(".mha-quiz").first
    quiz.locator("input[type=radio]").first.check()
    quiz.locator(".mha-quiz__check").click()
    assert quiz.locator(".mha-quiz__feedback").inner_text().strip()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_serious_violation_in_the_stepper(make_page, base_url, scheme):
    axe = ROOT / "node_modules/axe-core/axe.min.js"
    if not axe.is_file():
        pytest.fail("node_modules/axe-core/axe.min.js is missing: run `npm ci`")
    page, _ = make_page(color_scheme=scheme, viewport={"width": 390, "height": 800})
    _open(page, base_url, prompt="Lily found a")
    page.add_script_tag(path=str(axe))
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    bad = []
    for when in ("predict", "revealed", "last step"):
        if when == "revealed":
            page.get_by_role("button", name="Reveal the weights").click()
        if when == "last step":
            page.locator(".mha-st__title").focus()
            for _ in range(6):
                page.keyboard.press("ArrowRight")
            assert page.get_by_role("button", name="and run again").is_visible()
        result = page.evaluate("() => axe.run(document.querySelector('.mha-st'), { resultTypes: ['violations'] })")
        bad += [
            (when, v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
            for v in result["violations"]
            if v["impact"] in ("serious", "critical")
        ]
    assert not bad, bad
