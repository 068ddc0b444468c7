"""Five bugs a learner found on the microgpt page, each checked where the learner saw it.

* "1 head × 16 numbers": the banner said "marked ▸ in every map" over a map
  with no ▸;
* "Where the heads differ": the legend said the cells were attention weights
  whose rows add up to 1, but they are max − min spreads;
* the loss chart's last step label ("1000") ran past the picture's edge;
* the code tier of the append hint showed out.extend(blended) to a learner
  whose code never defines blended;
* Check replaced what the Run before it had printed, without a word;
* after a passing Check, the box still showed what an earlier Run of other code had printed (its
  error under a green "Passed"): a Check of code other than the code that ran clears the box.
"""

from __future__ import annotations

import re

import pytest

from tests.pyodide.test_checker_without_browser import solution, starter

pytestmark = pytest.mark.browser
WAIT_MODEL_JS = """async () => {
  for (let i = 0; i < 800 && !window.mhaMicrogpt; i++) await new Promise((r) => setTimeout(r, 25));
  return await window.mhaMicrogpt.ready;
}"""
WAIT_EXERCISE_JS = """async () => {
  for (let i = 0; i < 800 && !window.mhaExercise; i++) await new Promise((r) => setTimeout(r, 25));
  return await window.mhaExercise.ready;
}"""


def _open(make_page, base_url, width):
    page, _ = make_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(90000)
    page.goto(base_url + "microgpt/")
    page.evaluate(WAIT_MODEL_JS)
    return page


def test_the_banner_claims_a_mark_only_where_the_maps_have_one(make_page, base_url):
    page = _open(make_page, base_url, 1280)
    watch = page.locator("[data-mha-widget='microgpt-watch']")
    for view in ("1 head × 16 numbers", "Where the heads differ", "4 heads × 4 numbers"):
        watch.get_by_role("button", name=view).click()
        banner = watch.locator(".mgpt-watch__differ").inner_text()
        maps = watch.locator(".mgpt-watch__map").count()
        marked = watch.locator("tr[data-marked='true']").count()
        if "in every map" in banner or "in the map" in banner:
            assert marked == maps, (view, banner, maps, marked)
        else:
            assert "▸" not in banner, (view, banner)
        if marked == 0:
            assert "▸" not in banner, (view, banner)


def test_the_spread_views_legend_describes_spreads(make_page, base_url):
    page = _open(make_page, base_url, 390)
    watch = page.locator("[data-mha-widget='microgpt-watch']")
    watch.get_by_role("button", name="Where the heads differ").click()
    legend = watch.locator(".mgpt-legend").inner_text()
    assert "adds up to 1" not in legend and "largest minus the smallest" in legend, legend
    watch.get_by_role("button", name="4 heads × 4 numbers").click()
    assert "Each row adds up to 1" in watch.locator(".mgpt-legend").inner_text()


@pytest.mark.parametrize("width", [1280, 390])
def test_every_tick_label_of_the_loss_chart_is_inside_the_picture(make_page, base_url, width):
    page = _open(make_page, base_url, width)
    page.locator(".mgpt-compare").wait_for()
    out = page.evaluate("""() => {
      const svg = document.querySelector('.mgpt-loss__svg');
      const box = svg.getBoundingClientRect();
      return [...svg.querySelectorAll('text.mgpt-loss__tick')].map((t) => {
        const r = t.getBoundingClientRect();
        return [t.textContent, r.left - box.left, box.right - r.right];
      });
    }""")
    labels = [t for t, _, _ in out]
    assert "1000" in labels, labels
    clipped = [(t, left, right) for t, left, right in out if left < -0.5 or right < -0.5]
    assert not clipped, clipped


@pytest.fixture
def exercise(make_page, base_url):
    page, _ = make_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(90000)
    page.goto(base_url + "microgpt/")
    page.evaluate("() => localStorage.removeItem('mha-microgpt-progress')")
    page.reload()
    page.evaluate(WAIT_EXERCISE_JS)
    return page


def test_the_append_hint_shows_code_the_learner_can_use(exercise):
    page = exercise
    inline = "[sum(weight * v[j] for weight, v in zip(w, v_h)) for j in range(HEAD_DIM)]"
    mine = (
        solution()
        .replace("        blended = " + inline + "\n", "")
        .replace("out.extend(blended)", f"out.append({inline})")
    )
    assert "blended" not in mine.split("def multi_head")[1].split("return out")[0]
    verdict = page.evaluate("(s) => window.mhaExercise.check(s)", mine)
    assert "out holds lists instead of numbers" in verdict["hint"]["idea"], verdict
    code = verdict["hint"]["code"]
    assert "blended" not in code, code
    assert f"out.extend({inline})" in code, code


def test_check_keeps_the_runs_output_and_says_whose_it_is(exercise):
    page = exercise
    ex = page.locator("[data-mha-widget='microgpt-exercise']")
    page.evaluate("(s) => window.mhaExercise.setCode(s)", solution())
    ex.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_function("() => document.querySelector('.mgpt-ex__output').textContent.includes('after attn_wo')")
    printed = page.inner_text(".mgpt-ex__output")
    ex.get_by_role("button", name="Check", exact=True).click()
    page.wait_for_selector(".mgpt-ex__verdict[data-passed='true']")
    assert page.inner_text(".mgpt-ex__output") == printed
    label = ex.locator(".mgpt-ex__label").inner_text()
    assert re.search(r"last run", label, re.I) and re.search(r"check shows no prints", label, re.I), label


def test_a_check_of_other_code_clears_an_older_runs_output(exercise):
    page = exercise
    ex = page.locator("[data-mha-widget='microgpt-exercise']")
    wrong = solution().replace("out.extend(blended)", "out.append(blended)")
    page.evaluate("(s) => window.mhaExercise.setCode(s)", wrong)
    ex.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_function("() => document.querySelector('.mgpt-ex__output').textContent.includes('out holds lists')")
    # the learner fixes the code and checks it without running it again
    page.evaluate("(s) => window.mhaExercise.setCode(s)", solution())
    ex.get_by_role("button", name="Check", exact=True).click()
    page.wait_for_selector(".mgpt-ex__verdict[data-passed='true']")
    shown = ex.locator(".mgpt-ex__output").inner_text()
    assert "out holds lists" not in shown, f"a passing Check shows an older Run's prints: {shown!r}"
    assert "press Run" in shown, shown
    assert ex.locator(".mgpt-ex__label").text_content() == "Output"
    # and a Check of the starter after a Run of the solution does the same
    ex.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_function("() => document.querySelector('.mgpt-ex__output').textContent.includes('after attn_wo')")
    page.evaluate("(s) => window.mhaExercise.setCode(s)", starter())
    ex.get_by_role("button", name="Check", exact=True).click()
    page.wait_for_selector(".mgpt-ex__verdict[data-passed='false']")
    assert "after attn_wo" not in ex.locator(".mgpt-ex__output").inner_text()
