"""Heads with consequences on the microgpt page, in headless Chromium.

* Explore: the next-letter bars for the typed name with the four heads (any of
  them switched off) and with the one-head probe are the Python microgpt's
  (export/microgpt/floats.py) for the same setting, within float64 tolerance,
  and they change when a switch is pressed;
* the honest comparison shows the one-head microgpt's loss over the whole
  names list (microgpt_heads.json) and samples beside the four-head one's;
* Watch marks, in every head's map, the row where the heads disagree most
  (the same row the Python twin of ``headDisagreement`` finds), says so in
  words, and has a view of the spread between the heads;
* the pages pass axe at 390 px; screenshots at 1280 and 390 px, light and
  dark, go to $MHA_SCREENSHOTS when it is set.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from export.artefacts import Artefacts
from export.microgpt import floats
from tests.tolerance import FLOAT64_REL

pytestmark = pytest.mark.browser
WAIT_MODEL_JS = """async () => {
  for (let i = 0; i < 800 && !window.mhaMicrogpt; i++) await new Promise((r) => setTimeout(r, 25));
  return await window.mhaMicrogpt.ready;
}"""
SHOTS = os.environ.get("MHA_SCREENSHOTS")


@pytest.fixture(scope="module")
def four():
    return floats.load_trained(Artefacts().microgpt_trained)


@pytest.fixture(scope="module")
def one():
    return floats.load_trained(Artefacts().microgpt_one_head)


def _open(make_page, base_url, **context):
    page, watch = make_page(**context)
    page.set_default_timeout(60000)
    page.goto(base_url + "microgpt/")
    page.evaluate(WAIT_MODEL_JS)
    page.wait_for_selector(".mgpt-compare")
    return page, watch


def _shown(page, chart):
    box = page.locator(f"[data-mha-widget='microgpt-explore'] [data-chart='{chart}']")
    return (
        box.get_attribute("data-setting"),
        box.get_attribute("data-prefix"),
        json.loads(box.get_attribute("data-probs")),
    )


def _same(got, want):
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert math.isclose(a, b, rel_tol=FLOAT64_REL, abs_tol=1e-15), (a, b)


def _disagreement(head_weights):
    """Python twin of watch.js headDisagreement: mean pairwise total-variation distance per row."""
    scores = []
    for per_head in head_weights:
        pairs = [(a, b) for a in range(len(per_head)) for b in range(a + 1, len(per_head))]
        scores.append(sum(sum(abs(x - y) for x, y in zip(per_head[a], per_head[b])) / 2 for a, b in pairs) / len(pairs))
    return max(range(len(scores)), key=lambda i: scores[i])


def test_head_switches_and_probe_change_the_bars_as_python_does(make_page, base_url, four):
    page, _ = _open(make_page, base_url, viewport={"width": 1280, "height": 900})
    explore = page.locator("[data-mha-widget='microgpt-explore']")
    w, u = four["weights"], four["uchars"]
    name = "emma"
    setting, prefix, probs = _shown(page, "heads")
    assert (setting, prefix) == ("all", name)
    _same(probs, floats.forward_attention(w, u, name)["probs"][len(name)])
    _, _, probe = _shown(page, "probe")
    _same(probe, floats.forward_attention(w, u, name, probe=True)["probs"][len(name)])
    assert max(abs(a - b) for a, b in zip(probs, probe)) > 1e-3  # the probe changes what it predicts

    before = probs
    explore.locator(".mgpt-switch[data-head='2']").click()
    setting, _, probs = _shown(page, "heads")
    assert setting == "without:2"
    _same(probs, floats.forward_attention(w, u, name, head_mask=[True, False, True, True])["probs"][len(name)])
    assert max(abs(a - b) for a, b in zip(probs, before)) > 1e-3  # live: the bars moved
    assert "Head 2 knocked out" in explore.locator(".mgpt-bars__caption").inner_text()

    explore.locator(".mgpt-switch[data-head='1']").click()
    explore.locator(".mgpt-switch[data-head='4']").click()
    explore.get_by_role("button", name="em", exact=True).click()  # after "em" only
    setting, prefix, probs = _shown(page, "heads")
    assert (setting, prefix) == ("without:1,2,4", "em")
    _same(probs, floats.forward_attention(w, u, name, head_mask=[False, False, True, False])["probs"][2])
    _, prefix, probe = _shown(page, "probe")
    assert prefix == "em"
    _same(probe, floats.forward_attention(w, u, name, probe=True)["probs"][2])

    explore.get_by_label("Name to type").fill("olivia")
    setting, prefix, probs = _shown(page, "heads")
    assert (setting, prefix) == ("without:1,2,4", "olivia")
    _same(probs, floats.forward_attention(w, u, "olivia", head_mask=[False, False, True, False])["probs"][6])
    for h in (1, 2, 4):
        explore.locator(f".mgpt-switch[data-head='{h}']").click()
    assert _shown(page, "heads")[0] == "all"


def test_the_one_head_model_is_compared_honestly(make_page, base_url, four, one):
    """The headline losses are the pipeline's, over the whole names list (not the last training steps)."""
    measured = json.loads(Artefacts().microgpt_heads.read_text())
    page, _ = _open(make_page, base_url, viewport={"width": 1280, "height": 900})
    panel = page.locator(".mgpt-compare")
    assert float(panel.get_attribute("data-loss-four")) == measured["loss"]["all_on"]
    assert float(panel.get_attribute("data-loss-one")) == measured["loss"]["one_head_twin"]
    legend = panel.locator(".mgpt-loss__legend").inner_text()
    assert f"{measured['loss']['all_on']:.4f}" in legend and f"{measured['loss']['one_head_twin']:.4f}" in legend
    verdict = panel.locator(".mgpt-compare__verdict").inner_text()
    assert f"{abs(measured['gain']['one_head_minus_four']):.4f}" in verdict
    assert f"{measured['predictions']:,}" in verdict
    assert panel.locator("[data-model='four'] .mgpt-compare__names").inner_text() == ", ".join(four["samples"])
    assert panel.locator("[data-model='one'] .mgpt-compare__names").inner_text() == ", ".join(one["samples"])
    assert panel.locator("path.mgpt-loss__line").count() == 2


def test_watch_marks_where_the_heads_disagree_most(make_page, base_url, four):
    page, _ = _open(make_page, base_url, viewport={"width": 390, "height": 844}, color_scheme="dark")
    watch = page.locator("[data-mha-widget='microgpt-watch']")
    for name in ("emma", "kristopher"):
        watch.get_by_label("Name", exact=True).fill(name)
        page.wait_for_function(f"() => document.querySelector('.mgpt-watch__maps').dataset.name === '{name}'")
        run = floats.forward_attention(four["weights"], four["uchars"], name)
        row = _disagreement(run["head_weights"])
        maps = watch.locator(".mgpt-watch__maps")
        assert maps.get_attribute("data-marked") == str(row)
        assert watch.locator("tr[data-marked='true']").count() == 4
        label = "the start marker" if row == 0 else f"“{name[row - 1]}”"
        assert f"The heads disagree most at {label}" in watch.locator(".mgpt-watch__differ").inner_text()
    # At 390 px, one map per row and cells big enough to read.
    cell = watch.locator(".mgpt-heat__cell").first.bounding_box()
    assert cell["width"] >= 17 and cell["height"] >= 17, cell
    first, second = (watch.locator(".mgpt-watch__map").nth(i).bounding_box() for i in (0, 1))
    assert second["y"] > first["y"] + first["height"] - 1
    watch.get_by_role("button", name="Where the heads differ").click()
    assert watch.locator(".mgpt-watch__map").count() == 1
    assert watch.locator(".mgpt-watch__map").get_attribute("data-head") == "spread"


@pytest.mark.parametrize("width,scheme", [(1280, "light"), (1280, "dark"), (390, "light"), (390, "dark")])
def test_screenshots_and_axe(make_page, base_url, width, scheme):
    page, _ = _open(make_page, base_url, viewport={"width": width, "height": 900}, color_scheme=scheme)
    page.locator("[data-mha-widget='microgpt-explore'] .mgpt-switch[data-head='3']").click()
    axe = Path(__file__).resolve().parents[3] / "node_modules/axe-core/axe.min.js"
    if axe.exists():
        page.add_script_tag(path=str(axe))
        found = page.evaluate("""async () => (await axe.run(
            document.querySelectorAll("[data-mha-widget^='microgpt-watch'], [data-mha-widget^='microgpt-explore']"),
            { runOnly: ["wcag2a", "wcag2aa"] })).violations.map((v) => v.id + ": " + v.nodes.length)""")
        assert found == []
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        for widget in ("watch", "explore"):
            page.locator(f"[data-mha-widget='microgpt-{widget}']").screenshot(
                path=str(Path(SHOTS) / f"{widget}-{width}-{scheme}.png")
            )
