"""Explore's list of where microgpt's heads matter, in headless Chromium.

The list is the pipeline's (wasm_assets/microgpt_heads.json, recomputed by
tests/pipeline/test_microgpt_head_effect.py); one click loads the name, the
prefix and the switches, and the bars then show the plain-float model's
distribution with those heads off, moved from the all-on one by the listed
total-variation distance.
"""

from __future__ import annotations

import json
import math

import pytest

from export.artefacts import Artefacts
from export.microgpt import floats
from tests.tolerance import FLOAT64_REL

pytestmark = pytest.mark.browser
WAIT_MODEL_JS = """async () => {
  for (let i = 0; i < 800 && !window.mhaMicrogpt; i++) await new Promise((r) => setTimeout(r, 25));
  return await window.mhaMicrogpt.ready;
}"""


@pytest.mark.parametrize("width", [1280, 390])
def test_each_listed_prefix_loads_with_its_measured_effect(make_page, base_url, width):
    measured = json.loads(Artefacts().microgpt_heads.read_text())
    model = floats.load_trained(Artefacts().microgpt_trained)
    n_head = model["config"]["n_head"]
    page, _ = make_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(60000)
    page.goto(base_url + "microgpt/")
    page.evaluate(WAIT_MODEL_JS)
    where = page.locator(".mgpt-where")
    where.wait_for()
    for setting in ("all_off", f"head{n_head}_off", "head1_off"):
        where.locator(f".mgpt-chip[data-setting='{setting}']").click()
        picks = where.locator(".mgpt-where__pick")
        assert picks.count() == len(measured["top"][setting])
        for i in (0, 1):
            entry = measured["top"][setting][i]
            button = picks.nth(i)
            assert button.get_attribute("data-name") == entry["name"]
            assert button.get_attribute("data-prefix") == entry["prefix"]
            assert f"{entry['tv'] * 100:.0f}%" in button.inner_text()
            button.click()
            box = page.locator("[data-mha-widget='microgpt-explore'] [data-chart='heads']")
            off = list(range(1, n_head + 1)) if setting == "all_off" else [int(setting[4:-4])]
            assert box.get_attribute("data-setting") == f"without:{','.join(map(str, off))}"
            assert box.get_attribute("data-prefix") == entry["prefix"]
            assert page.get_by_label("Name to type").input_value() == entry["name"]
            shown = json.loads(box.get_attribute("data-probs"))
            i_pos = len(entry["prefix"])
            full = floats.forward_attention(model["weights"], model["uchars"], entry["name"])["probs"][i_pos]
            mask = [h + 1 not in off for h in range(n_head)]
            want = floats.forward_attention(model["weights"], model["uchars"], entry["name"], head_mask=mask)["probs"][
                i_pos
            ]
            assert all(math.isclose(a, b, rel_tol=FLOAT64_REL, abs_tol=1e-15) for a, b in zip(shown, want))
            moved = 0.5 * sum(abs(a - b) for a, b in zip(full, shown))
            assert math.isclose(moved, entry["tv"], rel_tol=1e-9), (moved, entry)
            assert box.is_visible()
    # The switches follow: pressing a head's switch again brings it back.
    page.locator(".mgpt-switch[data-head='1']").click()
    assert page.locator(".mgpt-switch[data-head='1']").get_attribute("aria-pressed") == "true"
