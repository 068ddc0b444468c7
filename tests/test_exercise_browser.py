"""The microgpt page in headless Chromium: heatmaps, the live model, and the
multi_head exercise graded by the checker in real Pyodide (in a Web Worker).

Every page fails its test on a console error, an uncaught exception or a
request to another origin (tests/browser_util.PageWatch). One page at phone
width in dark mode serves most checks, so Pyodide starts only a few times.
"""
from __future__ import annotations

import re
import time

import pytest

from tests.browser_util import PageWatch
from tests.test_exercise_checker import EXPECTED, line_of, solution, starter, variants

pytestmark = pytest.mark.browser

WAIT_EXERCISE_JS = """async () => {
  for (let i = 0; i < 800 && !window.mhaExercise; i++) await new Promise((r) => setTimeout(r, 25));
  if (!window.mhaExercise) throw new Error("window.mhaExercise never appeared");
  return await window.mhaExercise.ready;
}"""
WAIT_MODEL_JS = """async () => {
  for (let i = 0; i < 800 && !window.mhaMicrogpt; i++) await new Promise((r) => setTimeout(r, 25));
  return await window.mhaMicrogpt.ready;
}"""
CHECK_JS = "(source) => window.mhaExercise.check(source)"


def open_microgpt(page, base_url: str, wait_python: bool = True):
    page.set_default_timeout(60000)
    page.goto(base_url + "microgpt/")
    page.evaluate(WAIT_MODEL_JS)
    return page.evaluate(WAIT_EXERCISE_JS) if wait_python else None


def timed_check(page, source: str):
    started = time.monotonic()
    verdict = page.evaluate(CHECK_JS, source)
    return verdict, time.monotonic() - started


@pytest.fixture(scope="module")
def phone_page(browser, servers):
    """The page on the isolated server, 390 px wide, dark colour scheme; Python ready."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, color_scheme="dark")
    page = context.new_page()
    watch = PageWatch(page)
    info = open_microgpt(page, servers["isolated"])
    yield page, watch, info
    try:
        watch.check()
    finally:
        context.close()


def test_checker_verdicts_in_pyodide_isolated(phone_page):
    page, _, info = phone_page
    assert info["isolated"] is True and info["python"].startswith("3.")
    sources = variants()
    for name, pattern in EXPECTED.items():
        verdict, _ = timed_check(page, sources[name])
        assert verdict["passed"] is (name == "correct"), (name, verdict)
        match = re.search(pattern, verdict["message"], re.S)
        assert match, (name, verdict["message"])
        if name == "raises":
            assert int(match.group(1)) == line_of(sources[name], "blended[HEAD_DIM]")
    # A loop that never ends: interrupted within 6 s, and the interpreter survives.
    verdict, seconds = timed_check(page, sources["loop"])
    assert verdict["timedOut"] and not verdict["passed"]
    assert "more than 5 seconds" in verdict["message"] and "still running" in verdict["message"]
    assert seconds < 6.0, seconds
    stop = page.evaluate("() => window.mhaExercise.lastStop()")
    assert stop["how"] == "interrupt" and stop["readyAt"] - stop["limitAt"] < 1000, stop
    verdict, seconds = timed_check(page, sources["correct"])
    assert verdict["passed"], verdict
    # Run streams prints and reports errors with the learner's line numbers.
    result = page.evaluate("(s) => window.mhaExercise.run(s)", "print('hello from', 6 * 7)\nx = [][1]\n")
    assert result["ok"] is False and 'File "exercise.py", line 2, in <module>' in result["error"]
    assert "hello from 42" in page.inner_text(".mgpt-ex__output")


def test_js_attention_equals_python_forward_attention(phone_page):
    from export.microgpt import forward_attention, load_trained, sample_names

    page, _, _ = phone_page
    model = load_trained("wasm_assets/microgpt-trained.json")
    fields = ("head_weights", "single_head_weights", "heads_out", "attn_out", "probs", "q", "keys", "values")
    for name in ("emma", "kristopher", "zoe", "abcdefghijklmno"):
        want = forward_attention(model["weights"], model["uchars"], name)
        got = page.evaluate("(n) => window.mhaMicrogpt.forward(n)", name)
        assert got["tokens"] == want["tokens"] and got["labels"] == want["labels"]
        for field in fields:
            a, b = _flat(got[field]), _flat(want[field])
            assert len(a) == len(b), (name, field)
            worst = max(abs(x - y) for x, y in zip(a, b))
            assert worst <= 1e-12, (name, field, worst)
    for n, temperature, seed in ((6, 0.5, 42), (5, 1.3, 7)):
        got = page.evaluate("(o) => window.mhaMicrogpt.sample(o)", {"n": n, "temperature": temperature, "seed": seed})
        assert got == sample_names(model["weights"], model["uchars"], n=n, temperature=temperature, seed=seed)


def _flat(value):
    if isinstance(value, list):
        return [x for item in value for x in _flat(item)]
    return [float(value)]


def test_heatmaps_names_and_phone_layout(phone_page):
    page, _, _ = phone_page
    watch = page.locator("[data-mha-widget='microgpt-watch']")
    maps = watch.locator(".mgpt-watch__maps")
    assert maps.get_attribute("data-name") == "emma"
    assert watch.locator("table.mgpt-heat").count() == 4
    assert watch.locator("table.mgpt-heat").first.locator("tbody tr").count() == 5   # start marker + 4 letters
    # The cells use the shared viridis map and hold the weights as text for screen readers.
    first_row = watch.locator("table.mgpt-heat").first.locator("tbody tr").first
    assert first_row.locator("td.mgpt-heat__cell").count() == 1
    assert first_row.locator("td.mgpt-heat__cell").inner_text().strip() == "1.00"
    name_box = watch.get_by_label("Name")
    name_box.fill("olivia")
    assert maps.get_attribute("data-name") == "olivia"
    assert watch.locator("table.mgpt-heat").first.locator("tbody tr").count() == 7
    watch.get_by_role("button", name="1 head × 16 numbers").click()
    assert watch.locator("table.mgpt-heat").count() == 1
    assert maps.get_attribute("data-view") == "one"
    watch.get_by_role("button", name="4 heads × 4 numbers").click()
    assert watch.locator("table.mgpt-heat").count() == 4
    message = watch.locator(".mgpt-field__message")
    for bad in ("Emma", "emma2", "abcdefghijklmnop", ""):
        name_box.fill(bad)
        assert message.inner_text().strip(), bad
        assert name_box.get_attribute("aria-invalid") == "true"
        assert maps.get_attribute("data-name") == "olivia", bad   # the last good name stays
    name_box.fill("Emma")
    assert "lowercase" in message.inner_text()
    name_box.fill("abcdefghijklmnop")
    assert "at most 15" in message.inner_text()
    name_box.fill("abcdefghijklmno")
    assert message.inner_text().strip() == "" and maps.get_attribute("data-name") == "abcdefghijklmno"
    # Explore: bars after a prefix, and sampled names.
    explore = page.locator("[data-mha-widget='microgpt-explore']")
    assert explore.locator(".mgpt-bars__col").count() == 27
    explore.get_by_role("button", name="em", exact=True).click()
    assert explore.locator(".mgpt-bars").get_attribute("data-prefix") == "em"
    assert explore.locator(".mgpt-samples li").count() == 10
    # Phone width: nothing pushes the page sideways; dark mode is on.
    overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1, overflow
    assert page.evaluate("() => document.body.getAttribute('data-md-color-scheme')") == "slate"
    background = page.evaluate("() => getComputedStyle(document.querySelector('.cm-editor')).backgroundColor")
    assert _luminance(background) < 0.35, background


def _luminance(css_colour: str) -> float:
    r, g, b = (int(v) for v in re.findall(r"\d+", css_colour)[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def test_runaway_code_restarts_python_without_isolation(make_page, servers):
    page, _ = make_page()
    info = open_microgpt(page, servers["plain"])
    assert info["isolated"] is False
    verdict, seconds = timed_check(page, variants()["loop"])
    assert verdict["timedOut"] and "restarted" in verdict["message"]
    assert seconds < 6.0, seconds
    page.evaluate(WAIT_EXERCISE_JS)
    assert page.evaluate("() => window.mhaExercise.lastStop()")["how"] == "restart"
    verdict, _ = timed_check(page, solution())
    assert verdict["passed"], verdict


def editor_text(page) -> str:
    """The whole text in the editor (CodeMirror only draws the lines in view)."""
    page.wait_for_selector(".cm-editor")
    return page.evaluate("() => window.mhaExercise.getCode()")


def _replace_line(page, contains: str, text: str) -> None:
    """Edit the editor line holding `contains` the way a learner would: go there, select it, type over it.

    CodeMirror only draws the lines in view, so the cursor travels with the arrow keys."""
    number = line_of(page.evaluate("() => window.mhaExercise.getCode()"), contains)
    page.locator(".cm-content").click()
    page.keyboard.press("Control+Home")
    for _ in range(number - 1):
        page.keyboard.press("ArrowDown")
    page.keyboard.press("End")
    page.keyboard.press("Home")          # to the end of the indentation
    page.keyboard.press("Shift+End")
    page.keyboard.insert_text(text)


def test_solve_in_editor_reload_and_clear(make_page, servers):
    """Under a sub-path: type the answer, Check, reload (progress kept), answer the quiz, clear."""
    page, watch = make_page()
    open_microgpt(page, servers["subpath"])
    assert all("/some/lesson/" in u for u in watch.requests if "/vendor/pyodide/" in u)
    exercise = page.locator("[data-mha-widget='microgpt-exercise']")
    assert exercise.get_by_label("Python code of the multi_head exercise").count() == 1
    _replace_line(page, "k_h = keys", "k_h = [k[start:start + HEAD_DIM] for k in keys]")
    _replace_line(page, "v_h = values", "v_h = [v[start:start + HEAD_DIM] for v in values]")
    _replace_line(page, "# BLANK 2", "out.extend(blended)")
    exercise.get_by_role("button", name="Run").click()
    page.wait_for_function("() => document.querySelector('.mgpt-ex__output').textContent.includes('after attn_wo')")
    assert "out has 16 items" in page.inner_text(".mgpt-ex__output")
    exercise.get_by_role("button", name="Check").click()
    page.wait_for_selector(".mgpt-ex__verdict[data-passed='true']")
    assert "Passed!" in page.inner_text(".mgpt-ex__verdict")
    source = page.locator("[data-mha-widget='microgpt-source']")
    count = source.locator(".mgpt-src__count")
    learned, total = int(count.get_attribute("data-learned")), int(count.get_attribute("data-total"))
    assert f"{learned} / {total} lines learned" in count.inner_text()
    assert source.locator(".mgpt-src__line--mha").count() >= 10
    quiz = page.locator("[data-mha-widget='microgpt-quiz']")
    quiz.locator("[data-question='extend'] [data-choice='1']").click()
    assert "Right." in quiz.locator("[data-question='extend'] .mgpt-quiz__feedback").inner_text()
    quiz.locator("[data-question='wo'] [data-choice='0']").click()
    assert quiz.locator("[data-question='wo']").get_attribute("data-answered") == "wrong"
    # The editor saves its text a moment after the last change: wait until the saved copy has it.
    page.wait_for_function("""() => (localStorage.getItem('mha-microgpt-progress') || '')
        .includes('out.extend(blended)')""")

    page.reload()
    page.evaluate(WAIT_MODEL_JS)
    page.wait_for_selector(".cm-editor")
    content = editor_text(page)
    assert "k[start:start + HEAD_DIM] for k in keys" in content and "out.extend(blended)" in content
    assert "solved this exercise earlier" in page.inner_text(".mgpt-ex__verdict")
    assert quiz.locator("[data-question='extend']").get_attribute("data-answered") == "right"
    assert quiz.locator("[data-question='wo']").get_attribute("data-answered") == "wrong"
    assert int(count.get_attribute("data-learned")) == learned
    assert "Exercise: solved" in page.inner_text(".mgpt-progress__summary")

    page.get_by_role("button", name="Clear my progress").click()
    assert "k_h = keys" in editor_text(page)
    assert quiz.locator("[data-answered]").count() == 0
    assert int(count.get_attribute("data-learned")) < learned
    assert page.evaluate("() => localStorage.getItem('mha-microgpt-progress')") is None
    page.reload()
    page.wait_for_selector(".cm-editor")
    assert "k_h = keys" in editor_text(page)
    assert "Exercise: not solved yet" in page.inner_text(".mgpt-progress__summary")


def test_show_solution_after_three_failed_checks(phone_page):
    page, _, _ = phone_page
    exercise = page.locator("[data-mha-widget='microgpt-exercise']")
    page.get_by_role("button", name="Clear my progress").click()
    button = exercise.get_by_role("button", name="Show solution")
    assert not button.is_visible()
    assert "k_h = keys" in editor_text(page)   # the starter: Check fails
    for n in (1, 2, 3):
        exercise.get_by_role("button", name="Check").click()
        page.wait_for_function(
            "(n) => (JSON.parse(localStorage.getItem('mha-microgpt-progress') || '{}').failedChecks || 0) >= n", arg=n)
        assert button.is_visible() is (n == 3)
    assert "out is empty" in page.inner_text(".mgpt-ex__verdict")
    button.click()
    assert "k[start:start + HEAD_DIM] for k in keys" in editor_text(page)
    exercise.get_by_role("button", name="Reset").click()
    assert editor_text(page).count("k_h = keys") == 1
    assert starter().splitlines()[0] in editor_text(page)
