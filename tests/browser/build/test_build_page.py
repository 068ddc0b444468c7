"""The "Build it yourself" page in headless Chromium: the learner's functions in real Pyodide, judged by the page.

The page runs the teaching graph (four_heads.steps.onnx) on the prompt, hands
one function's inputs to a fresh Python worker, judges the numbers it gets
back against the graph's tensors and only then asks Python for the words.
tests/pyodide/test_build_exercise.py checks every mistake's words under
CPython; here a few of them go through the whole page.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.pyodide.test_build_exercise import MISTAKES, solution

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[3]
AXE = ROOT / "node_modules/axe-core/axe.min.js"
PAGE = "lesson/build/"
FUNCTIONS = ["project", "split_heads", "scores", "causal_softmax", "blend", "multi_head_attention"]
WAIT_JS = """async () => {
  for (let i = 0; i < 2400 && !window.mhaBuild; i++) await new Promise((r) => setTimeout(r, 25));
  if (!window.mhaBuild) throw new Error("window.mhaBuild never appeared");
  return await window.mhaBuild.ready;
}"""
CHECK_JS = "([name, source]) => window.mhaBuild.check(name, source)"


def open_page(page, base_url):
    page.set_default_timeout(90000)
    page.goto(base_url + PAGE)
    return page.evaluate(WAIT_JS)


def axe_violations(page) -> list[str]:
    page.add_script_tag(content=AXE.read_text())
    return page.evaluate("""async () => {
      const result = await axe.run(document, { resultTypes: ["violations"] });
      return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
        .map((v) => `${v.id} (${v.impact}, ${v.nodes.length}): ` + v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(" | "));
    }""")


def test_every_function_passes_in_order_unlocks_the_next_and_is_remembered(make_page, base_url):
    page, watch = make_page(viewport={"width": 1280, "height": 900})
    open_page(page, base_url)
    assert page.evaluate("() => window.mhaBuild.progress().unlocked") == ["project"]
    for i, name in enumerate(FUNCTIONS):
        verdict = page.evaluate(CHECK_JS, [name, solution()])
        assert verdict["passed"], (name, verdict)
        unlocked = page.evaluate("() => window.mhaBuild.progress().unlocked")
        assert unlocked == FUNCTIONS[: min(i + 2, len(FUNCTIONS))], unlocked
    assert page.locator(".mgpt-ex__verdict[data-passed='true']").is_visible()
    # The select offers only what is unlocked; a reload keeps the passed functions, the code and the prompt.
    page.evaluate("() => window.mhaBuild.setCode('# mine\\n')")
    # The editor saves 300 ms after the last keystroke: wait until the code is stored.
    page.wait_for_function("() => JSON.parse(localStorage.getItem('mha-build-exercise') || '{}').code === '# mine\\n'")
    page.reload()
    page.evaluate(WAIT_JS)
    assert page.evaluate("() => window.mhaBuild.progress().passed") == FUNCTIONS
    assert page.evaluate("() => window.mhaBuild.getCode()") == "# mine\n"
    watch.check()


@pytest.mark.parametrize("name", ["scores_unscaled", "future_not_masked", "mha_append", "mha_heads_reversed"])
def test_a_mistake_is_named_in_words_then_the_line_then_code(make_page, base_url, name):
    function, make, pattern, _ = MISTAKES[name]
    page, watch = make_page(viewport={"width": 1280, "height": 900})
    open_page(page, base_url)
    verdict = page.evaluate(CHECK_JS, [function, make()])
    assert not verdict["passed"] and verdict["hint"], verdict
    assert re.search(pattern, verdict["hint"]["idea"] + "\n" + verdict["hint"]["where"], re.S), verdict
    box = page.locator(".mgpt-ex__verdict")
    assert box.get_attribute("data-tier") == "idea"
    assert not box.locator(".mgpt-verdict__where").is_visible()
    box.get_by_role("button", name="Which line?").click()
    assert box.locator(".mgpt-verdict__where").is_visible() and box.get_attribute("data-tier") == "where"
    box.get_by_role("button", name="Show me the code").click()
    assert box.locator(".mgpt-verdict__code").is_visible()
    watch.check()


def test_an_unknown_word_is_refused_in_words_and_the_last_prompt_stays(make_page, base_url):
    page, watch = make_page(viewport={"width": 390, "height": 844}, color_scheme="dark")
    open_page(page, base_url)
    assert page.evaluate("() => window.mhaBuild.setPrompt('the dog saw a zorblax')") is False
    assert "zorblax" in page.locator(".mha-build__prompt-note").inner_text()
    verdict = page.evaluate(CHECK_JS, ["project", solution()])
    assert verdict["passed"], verdict
    # A phone: nothing wider than the screen; keyboard: the prompt, its button and Check are reachable by Tab.
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    assert not axe_violations(page)
    watch.check()


def test_the_drive_says_it_is_open_once_the_whole_function_passed(make_page, base_url):
    """Once multi_head_attention has passed, the block under the exercise stops telling the
    learner to pass it first (a reviewer found that line still there after passing)."""
    page, watch = make_page(viewport={"width": 1280, "height": 900})
    page.goto(base_url + PAGE)
    page.evaluate(
        """(passed) => localStorage.setItem('mha-build-exercise',
                     JSON.stringify({ code: null, passed, prompt: null }))""",
        FUNCTIONS,
    )
    open_page(page, base_url)
    note = page.locator(".mha-build__driver .mha-build__note")
    page.locator(".mha-build__driver button:not([disabled])").wait_for()
    assert "first" not in note.inner_text(), note.inner_text()
    assert "passed" in note.inner_text(), note.inner_text()
    watch.check()
