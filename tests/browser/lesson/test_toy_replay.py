"""Page 1's trained task: the recorded learning curves replay, labelled as recorded runs.

The replay redraws the build-time figure's paths from the points they carry
(wasm_assets/toy_task.json); its readout says the update and the mean share solved
over seeds per head count, which must be the artefact's numbers at that update.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser
PAGE1 = "lesson/1-why-more-heads/"


def _means_at(pair, step):
    out = {}
    for h, r in pair["by_heads"].items():
        vals = [next(a for s, a, _ in run["curve"] if s == step) for run in r["runs"]]
        out[int(h)] = sum(vals) / len(vals)
    return out


def _readout(means):
    return ", ".join(f"{h} {'head' if h == 1 else 'heads'} {100 * m:.1f} %" for h, m in sorted(means.items()))


def test_replay_redraws_the_recorded_runs_step_by_step(make_page, base_url, load_asset):
    toy = load_asset("toy_task.json")
    pair = next(t for t in toy["tasks"] if t["task"] == "pair")
    steps = toy["config"]["steps"]
    page, watch = make_page()
    page.goto(base_url + PAGE1)
    root = page.locator("[data-mha-widget='toy_replay']")
    out = root.locator("output")
    out.wait_for()
    # at rest it shows the whole runs, as the build drew them
    assert "Recorded runs" in out.text_content()
    assert _readout(_means_at(pair, steps)) in out.text_content()
    # the slider's first position: every path is one point, the readout the first recorded update
    slider = root.locator("input[type=range]")
    slider.focus()
    page.keyboard.press("Home")
    assert page.evaluate("""() => [...document.querySelectorAll('#fig-toy-curves path[data-points]')]
        .every((p) => !p.getAttribute('d').includes('L'))""")
    assert f"update 0 of {steps:,}" in out.text_content()
    # one step on: the readout is the artefact's mean at the second recorded update
    page.keyboard.press("ArrowRight")
    second = sorted({s for r in pair["by_heads"].values() for run in r["runs"] for s, _, _ in run["curve"]})[1]
    assert _readout(_means_at(pair, second)) in out.text_content()
    # Replay runs to the end by itself, then offers to replay again
    root.get_by_role("button", name="Replay the recorded runs").click()
    page.wait_for_function(
        "(n) => document.querySelector(\"[data-mha-widget='toy_replay'] output\").textContent.includes('update ' + n + ' of')",
        arg=f"{steps:,}",
        timeout=20000,
    )
    assert root.get_by_role("button").text_content() == "Replay the recorded runs"
    watch.check()
