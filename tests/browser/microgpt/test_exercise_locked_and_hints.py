"""The multi_head exercise as a real exercise, in headless Chromium with real Pyodide.

* Before the learner's check passes, no line of the two blanks is anywhere in
  the page's visible text or in the DOM of the "Unlocked" code view (it shows
  "✎ your line N goes here"); after a pass the lines show, each with the
  learner's own version beside it, and a reload keeps that.
* A failed check shows the hint's first tier only (the idea, no code); "Where?"
  adds the line, "Show me the code" the code. The three mistakes a second
  learner found (the head's offset forgotten, the weights instead of the
  blend, the list of keys sliced) get their own first tier.
* Asking for the solution after three failed checks unlocks the lines too.
* The editor's line-number gutter is opaque at 390 px once the code has
  scrolled sideways under it (lines never wrap).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.pyodide.test_checker_without_browser import CODE_IN_WORDS, SOLUTION_LINES, line_of, solution, starter

pytestmark = pytest.mark.browser
WAIT_EXERCISE_JS = """async () => {
  for (let i = 0; i < 800 && !window.mhaExercise; i++) await new Promise((r) => setTimeout(r, 25));
  if (!window.mhaExercise) throw new Error("window.mhaExercise never appeared");
  return await window.mhaExercise.ready;
}"""
SHOTS = os.environ.get("MHA_SCREENSHOTS")


def _shot(locator, name: str):
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        locator.screenshot(path=str(Path(SHOTS) / f"{name}.png"))


VISIBLE_AND_CODE_VIEW_JS = """() => ({
  visible: document.body.innerText,
  codeView: document.querySelector("[data-mha-widget='microgpt-source']").textContent,
})"""


def _file_lines() -> tuple[str, ...]:
    """microgpt.py's own lines for the two blanks (its names: head_dim, not HEAD_DIM)."""
    from export.microgpt import SOURCE

    found = [
        l.split("#")[0].strip()
        for l in SOURCE.read_text().splitlines()
        if re.match(r"\s*(k_h|v_h|blended) = |\s*out\.extend\(", l)
    ]
    assert len(found) == 4, found
    return tuple(found)


BLANK_LINES = SOLUTION_LINES + _file_lines()


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _no_solution_line(page):
    seen = page.evaluate(VISIBLE_AND_CODE_VIEW_JS)
    for where, text in seen.items():
        for line in BLANK_LINES:
            assert line not in _squash(text), (where, line)


def _alpha(colour: str) -> float:
    """The alpha of a computed CSS colour: rgb(), rgba() or color(srgb r g b / a)."""
    found = re.fullmatch(r"rgba\([^,]+,[^,]+,[^,]+,\s*([\d.]+)\)", colour) or re.fullmatch(
        r"color\(srgb [-\d.e]+ [-\d.e]+ [-\d.e]+ / ([\d.]+)\)", colour
    )
    if found:
        return float(found.group(1))
    assert re.fullmatch(r"rgb\([^)]*\)|color\(srgb [-\d.e]+ [-\d.e]+ [-\d.e]+\)", colour), colour
    return 1.0


def _edit(old: str, new: str) -> str:
    source = solution()
    assert source.count(old) == 1, old
    return source.replace(old, new)


@pytest.fixture(scope="module")
def phone(browser, servers):
    context = browser.new_context(viewport={"width": 390, "height": 844}, color_scheme="light")
    page = context.new_page()
    page.set_default_timeout(90000)
    page.goto(servers["isolated"] + "microgpt/")
    page.evaluate("() => localStorage.removeItem('mha-microgpt-progress')")
    page.reload()
    page.evaluate(WAIT_EXERCISE_JS)
    page.wait_for_selector(".mgpt-src__line")
    yield page
    context.close()


def test_locked_until_solved_then_the_learners_own_lines(phone):
    page = phone
    source_view = page.locator("[data-mha-widget='microgpt-source']")
    assert source_view.locator(".mgpt-src__line--locked").count() == 4
    assert "✎ your line 1 goes here" in source_view.inner_text()
    _no_solution_line(page)

    # A failed check: still locked, and the verdict shows the idea only.
    page.evaluate("(s) => window.mhaExercise.setCode(s)", starter())
    exercise = page.locator("[data-mha-widget='microgpt-exercise']")
    exercise.get_by_role("button", name="Check", exact=True).click()
    page.wait_for_selector(".mgpt-ex__verdict[data-passed='false'] .mgpt-verdict__idea")
    verdict = page.locator(".mgpt-ex__verdict")
    shown = verdict.inner_text()
    assert "Nothing is added to out yet" in shown and not CODE_IN_WORDS.search(shown.split("\n", 1)[1]), shown
    _no_solution_line(page)
    _shot(exercise, "exercise-390-light-idea")
    verdict.get_by_role("button", name="Where?").click()
    assert "Blank 2" in verdict.inner_text()
    _shot(verdict, "verdict-390-light-where")
    _no_solution_line(page)
    verdict.get_by_role("button", name="Show me the code").click()
    assert "out.extend(blended)" in verdict.locator(".mgpt-verdict__code").inner_text()
    assert verdict.get_attribute("data-tier") == "code"

    # The learner's own (right) version, written differently from microgpt.py's.
    mine = (
        starter()
        .replace("        k_h = keys\n", "        k_h = [key[start:start + HEAD_DIM] for key in keys]\n")
        .replace("        v_h = values\n", "        v_h = [val[start:start + HEAD_DIM] for val in values]\n")
        .replace(
            "    return out\n",
            "        out.extend([sum(a * v[j] for a, v in zip(w, v_h)) for j in range(HEAD_DIM)])\n    return out\n",
            1,
        )
    )
    page.evaluate("(s) => window.mhaExercise.setCode(s)", mine)
    exercise.get_by_role("button", name="Check", exact=True).click()
    page.wait_for_selector(".mgpt-ex__verdict[data-passed='true']")
    page.wait_for_selector("[data-mha-widget='microgpt-source'] .mgpt-src[data-unlocked='true']")
    text = _squash(source_view.text_content())
    for line in _file_lines():
        assert line in text, line
    yours = source_view.locator(".mgpt-src__line--yours")
    assert yours.count() == 4
    yours.nth(0).scroll_into_view_if_needed()
    _shot(source_view, "unlocked-390-light-solved")
    assert "yours: k_h = [key[start:start + HEAD_DIM] for key in keys]" in yours.nth(0).inner_text()
    assert "yours: out.extend([sum(a * v[j]" in yours.nth(3).inner_text()
    page.reload()
    page.wait_for_selector("[data-mha-widget='microgpt-source'] .mgpt-src[data-unlocked='true']")
    assert page.locator(".mgpt-src__line--yours").count() == 4


MISTAKE_IDEAS = {
    "offset forgotten": (
        _edit("k_h = [k[start:start + HEAD_DIM] for k in keys]", "k_h = [k[:HEAD_DIM] for k in keys]"),
        "every head takes the first 4, which belong to head 1",
        "k[:HEAD_DIM]",
    ),
    "weights, not the blend": (
        _edit("out.extend(blended)", "out.extend(w)"),
        "attention weights, one per position, instead of the head's 4 blended numbers",
        "out.extend(w)",
    ),
    "list of keys sliced": (
        _edit("k_h = [k[start:start + HEAD_DIM] for k in keys]", "k_h = keys[start:start + HEAD_DIM]"),
        "cuts the list of keys instead",
        "keys[start:",
    ),
    "append": (_edit("out.extend(blended)", "out.append(blended)"), "out holds lists instead of numbers", "out.append"),
    "no square root": (_edit("/ math.sqrt(HEAD_DIM)", ""), "scaled down before the softmax", "scores = "),
}


@pytest.mark.parametrize("name", list(MISTAKE_IDEAS))
def test_each_mistake_gets_its_first_tier_hint(phone, name):
    source, idea, needle = MISTAKE_IDEAS[name]
    verdict = phone.evaluate("(s) => window.mhaExercise.check(s)", source)
    assert verdict["passed"] is False and verdict["hint"], verdict
    hint = verdict["hint"]
    assert idea in hint["idea"], hint
    assert not CODE_IN_WORDS.search(hint["idea"]), hint["idea"]
    assert re.search(rf"\b[Ll]ine {line_of(source, needle)}\b", hint["where"]), hint["where"]
    # On the page: the idea only, until the learner asks for more.
    shown = phone.locator(".mgpt-ex__verdict")
    assert shown.locator(".mgpt-verdict__where").is_hidden() and shown.locator(".mgpt-verdict__code").is_hidden()


def test_long_lines_scroll_sideways_on_a_phone_and_the_gutter_stays_opaque(phone):
    page = phone
    long = "x = 1  # " + "a long comment " * 20
    page.evaluate("(s) => window.mhaExercise.setCode(s)", long + "\n" + starter())
    scroller = page.locator(".mgpt-ex__editor .cm-scroller")
    # No wrap (a wrapped Python line would look unindented): the line is one row, the editor scrolls sideways.
    assert scroller.evaluate("(el) => el.scrollWidth > el.clientWidth + 100"), scroller.evaluate(
        "(el) => [el.scrollWidth, el.clientWidth]"
    )
    first = page.locator(".mgpt-ex__editor .cm-line").first
    assert first.inner_text() == long
    assert first.evaluate("(el) => el.getBoundingClientRect().height") < 30
    scroller.evaluate("(el) => { el.scrollLeft = 200; }")
    colour = page.evaluate(
        "() => getComputedStyle(document.querySelector('.mgpt-ex__editor .cm-gutters')).backgroundColor"
    )
    assert _alpha(colour) == 1.0, colour
    page.evaluate("(s) => window.mhaExercise.setCode(s)", starter())


def test_revealing_the_solution_unlocks_the_lines(make_page, base_url):
    page, _ = make_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(90000)
    page.goto(base_url + "microgpt/")
    page.evaluate(WAIT_EXERCISE_JS)
    page.wait_for_selector(".mgpt-src__line--locked")
    page.evaluate("""() => localStorage.setItem('mha-microgpt-progress',
        JSON.stringify({version: 1, code: null, solved: false, failedChecks: 3}))""")
    page.reload()
    page.evaluate(WAIT_EXERCISE_JS)
    page.wait_for_selector(".mgpt-src__line--locked")
    _no_solution_line(page)
    page.get_by_role("button", name="Show solution").click()
    page.wait_for_selector("[data-mha-widget='microgpt-source'] .mgpt-src[data-unlocked='true']")
    text = _squash(page.locator("[data-mha-widget='microgpt-source']").text_content())
    assert all(line in text for line in _file_lines())
    assert "appears when your check passes" in text


@pytest.mark.parametrize("width,scheme", [(1280, "light"), (1280, "dark"), (390, "dark")])
def test_locked_view_screenshots(make_page, base_url, width, scheme):
    page, _ = make_page(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page.goto(base_url + "microgpt/")
    page.wait_for_selector(".mgpt-src__line--locked")
    _no_solution_line(page)
    view = page.locator("[data-mha-widget='microgpt-source']")
    view.locator(".mgpt-src__line--locked").first.scroll_into_view_if_needed()
    _shot(view, f"locked-{width}-{scheme}")
    if SHOTS:
        page.locator(".mgpt-ex__editor").screenshot(path=str(Path(SHOTS) / f"editor-{width}-{scheme}.png"))
