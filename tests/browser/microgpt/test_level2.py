"""microgpt's Level 2 in real Pyodide: offered once the two blanks pass, the whole multi_head, its own progress.

Level 2 is an exercise file (site_src/pyodide/exercises/microgpt_multi_head.py) on the
shared exercise runtime, in the same Python runner as Level 1. This test solves Level 1,
sees Level 2 offered and opens it, fails it with mistakes (each with its first message),
passes it with a whole function of its own, and reads what that leaves: Level 2's own
stored record (also in a second tab), the learner's function beside microgpt's lines in
"Unlocked", the link on to the build page; axe has nothing serious to say. With
$MHA_SCREENSHOTS set, the exercise area with Level 2 open is photographed at 1280 and
390 px, light and dark.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.browser.microgpt.test_exercise_page import AXE, CHECK_JS, open_microgpt
from tests.pyodide.test_checker_without_browser import MISTAKES as LEVEL1_MISTAKES
from tests.pyodide.test_checker_without_browser import solution as level1_solution
from tests.pyodide.test_microgpt_level2 import LEVEL2, solution, starter

pytestmark = pytest.mark.browser

SHOTS = os.environ.get("MHA_SCREENSHOTS")
LEVEL2_CHECK_JS = "(source) => window.mhaExercise.level2.check(source)"
STORED_JS = "(key) => JSON.parse(localStorage.getItem(key) || 'null')"
# A whole function written differently from the worked body (a learner's own), which must pass.
OWN = starter().replace(
    "    ...   # your code here\n",
    """    glued = []
    for h in range(N_HEAD):
        lo, hi = h * HEAD_DIM, (h + 1) * HEAD_DIM
        weights = softmax([dot(q[lo:hi], k[lo:hi]) / HEAD_DIM ** 0.5 for k in keys])
        for j in range(lo, hi):
            glued.append(sum(w * v[j] for w, v in zip(weights, values)))
    return glued
""",
)
AXE_JS = """async (selector) => {
  const r = await axe.run(selector, { resultTypes: ['violations'] });
  return r.violations.filter((v) => ['serious', 'critical'].includes(v.impact))
    .map((v) => ({ id: v.id, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
}"""


def solve_level1_and_open_level2(page):
    level2 = page.locator("[data-mha-widget='microgpt-exercise'] .mgpt-level2")
    assert level2.get_attribute("data-offered") == "false"
    assert level2.locator("button", has_text="Start Level 2").is_hidden()
    assert "Opens once your Check of the two blanks passes" in level2.inner_text()
    assert page.evaluate(CHECK_JS, level1_solution())["passed"]
    assert "Next: Level 2, just below" in page.locator(".mgpt-ex__level .mgpt-ex__verdict").inner_text()
    level2.locator("button", has_text="Start Level 2").click()
    level2.locator(".cm-editor").wait_for()
    return level2


def test_level2_offered_after_level1_passes_and_checked_with_its_own_progress(make_page, base_url):
    page, _ = make_page(viewport={"width": 1280, "height": 900})
    open_microgpt(page, base_url)
    other = page.context.new_page()  # a second tab of the same browser, open before Level 2 passes
    other.set_default_timeout(60000)
    other.goto(base_url + "microgpt/")
    other.wait_for_selector(".mgpt-progress__summary")
    level2 = solve_level1_and_open_level2(page)
    assert page.evaluate("() => window.mhaExercise.level2.getCode()") == starter()

    # Mistakes: one only a whole function can make, one of Level 1's, each with its first message.
    for name, source, pattern in (
        ("heads_summed", LEVEL2["heads_summed"][0](), LEVEL2["heads_summed"][1]),
        ("no_softmax", LEVEL2["no_softmax"][0](), LEVEL2["no_softmax"][1]),
        ("append", LEVEL1_MISTAKES["append"][0](), LEVEL1_MISTAKES["append"][1]),
    ):
        verdict = page.evaluate(LEVEL2_CHECK_JS, source)
        assert not verdict["passed"] and verdict["hint"], (name, verdict)
        assert re.search(pattern, verdict["hint"]["idea"] + "\n" + verdict["hint"]["where"], re.S), (name, verdict)
    assert level2.locator(".mgpt-ex__verdict").get_attribute("data-passed") == "false"
    assert level2.locator(".mgpt-verdict__idea").inner_text().startswith("out holds lists instead of numbers")
    assert page.evaluate(STORED_JS, "mha-microgpt-level2-progress")["failedChecks"] == 3
    assert page.evaluate(STORED_JS, "mha-microgpt-progress")["failedChecks"] == 0  # Level 1's record is its own

    # Three failures offer the worked body; it passes, and so does the learner's own function.
    level2.locator("button", has_text="Show solution").click()
    assert page.evaluate("() => window.mhaExercise.level2.getCode()") == solution()
    assert page.evaluate(LEVEL2_CHECK_JS, solution())["passed"]
    level2.locator(".cm-content").click()
    page.evaluate("(s) => window.mhaExercise.level2.setCode(s)", OWN)
    level2.locator("button", has_text="Check").click()
    page.wait_for_function("() => document.querySelector('.mgpt-level2 .mgpt-ex__verdict').dataset.passed === 'true'")
    assert level2.locator(".mgpt-verdict__title").inner_text() == "✓ Passed"
    link = level2.locator(".mgpt-level2__next a")
    assert link.inner_text() == "build it yourself" and link.get_attribute("href").endswith("lesson/build/")

    stored = page.evaluate(STORED_JS, "mha-microgpt-level2-progress")
    assert stored["solved"] is True and stored["solvedCode"] == OWN and stored["revealed"] is True
    assert page.evaluate(STORED_JS, "mha-microgpt-progress")["solvedCode"] == level1_solution()

    # Unlocked: the learner's whole function beside microgpt's lines.
    beside = page.locator("[data-mha-widget='microgpt-source'] .mgpt-src__beside")
    beside.wait_for()
    columns = beside.locator(".mgpt-src__colcode")
    assert "head_dim = N_EMBD // n_head" in columns.nth(0).inner_text()
    assert columns.nth(1).inner_text().startswith("def multi_head(q, keys, values):")
    assert "glued.append(sum(w * v[j]" in columns.nth(1).inner_text() and '"""' not in columns.nth(1).inner_text()

    # The other tab hears of it without a reload; Level 1's summary still reads as before.
    other.wait_for_function(
        "() => /Level 2 \\(the whole multi_head\\): solved/.test("
        "document.querySelector('.mgpt-progress__summary').textContent)"
    )
    assert "Exercise: solved" in other.inner_text(".mgpt-progress__summary")
    other.close()

    if AXE.is_file():
        page.add_script_tag(content=AXE.read_text())
        found = page.evaluate(AXE_JS, "[data-mha-widget='microgpt-exercise'], [data-mha-widget='microgpt-source']")
        assert found == [], found


def test_level2_opens_by_itself_once_begun_and_clearing_closes_the_offer(make_page, base_url):
    """Saved Level 2 code opens Level 2 on the next visit; "Clear my progress" clears both levels."""
    page, _ = make_page(
        viewport={"width": 390, "height": 844},
        color_scheme="dark",
        init_script="if (!sessionStorage.getItem('seeded')) { sessionStorage.setItem('seeded', '1'); "
        "localStorage.setItem('mha-microgpt-level2-progress', JSON.stringify({version: 1, "
        "code: '# mine', solved: false, failedChecks: 1, revealed: false, solvedCode: null})); }",
    )
    open_microgpt(page, base_url)
    level2 = page.locator(".mgpt-level2")
    level2.locator(".cm-editor").wait_for()
    assert page.evaluate("() => window.mhaExercise.level2.getCode()") == "# mine"
    assert level2.get_attribute("data-offered") == "true"
    page.locator("[data-mha-widget=microgpt-progress] button").click()
    assert page.evaluate("() => localStorage.getItem('mha-microgpt-level2-progress')") is None
    assert page.evaluate("() => window.mhaExercise.level2.getCode()") == starter()
    assert level2.get_attribute("data-offered") == "false"


@pytest.mark.skipif(not SHOTS, reason="screenshots only when $MHA_SCREENSHOTS names a folder")
@pytest.mark.parametrize("width,scheme", [(1280, "light"), (1280, "dark"), (390, "light"), (390, "dark")])
def test_screenshots_of_level2(make_page, base_url, width, scheme):
    # Tall enough on a wide screen for the editor to draw every line of the starter at once.
    page, _ = make_page(viewport={"width": width, "height": 1700 if width > 800 else 844}, color_scheme=scheme)
    open_microgpt(page, base_url)
    level2 = solve_level1_and_open_level2(page)
    page.add_style_tag(content=".md-header { visibility: hidden; }")  # (fixed: it would cover the picture's top)
    page.evaluate(LEVEL2_CHECK_JS, LEVEL2["heads_summed"][0]())
    level2.locator("button", has_text="Where?").click()
    Path(SHOTS).mkdir(parents=True, exist_ok=True)
    page.locator(".mgpt-ex__level .mgpt-ex__verdict").screenshot(
        path=str(Path(SHOTS) / f"level1-pass-{width}-{scheme}.png")
    )
    level2.screenshot(path=str(Path(SHOTS) / f"level2-fail-{width}-{scheme}.png"))
    page.evaluate("(s) => window.mhaExercise.level2.setCode(s)", OWN)
    level2.locator("button", has_text="Check").click()
    page.wait_for_function("() => document.querySelector('.mgpt-level2 .mgpt-ex__verdict').dataset.passed === 'true'")
    level2.locator(".mgpt-ex__verdict").screenshot(path=str(Path(SHOTS) / f"level2-pass-{width}-{scheme}.png"))
    page.locator(".mgpt-src__beside").screenshot(path=str(Path(SHOTS) / f"level2-beside-{width}-{scheme}.png"))
