"""The exercise's editor behaves as a Python editor should, in headless Chromium.

* No soft wrap: a long line stays one row and the editor scrolls sideways
  (a wrapped line would start at column 0 and look unindented);
* Home and End go to the start and end of the logical line, with and
  without Shift, even on a line wider than the editor;
* at 1280 px the editor is as wide as the text column and shows the whole
  starter without scrolling inside it; at 390 px at least 14 lines show at
  once without scrolling the page, in a font of at least 13 px.
"""

from __future__ import annotations

import pytest

from tests.pyodide.test_checker_without_browser import starter

pytestmark = pytest.mark.browser
WAIT_EXERCISE_JS = """async () => {
  for (let i = 0; i < 800 && !window.mhaExercise; i++) await new Promise((r) => setTimeout(r, 25));
  return await window.mhaExercise.ready;
}"""
LONG = "        scores = [dot(q_h, k) / math.sqrt(HEAD_DIM) for k in k_h]  # " + "a long comment " * 12


def _open(make_page, base_url, width, height):
    page, _ = make_page(viewport={"width": width, "height": height})
    page.set_default_timeout(90000)
    page.goto(base_url + "microgpt/")
    page.evaluate("() => localStorage.removeItem('mha-microgpt-progress')")
    page.reload()
    page.evaluate(WAIT_EXERCISE_JS)
    page.wait_for_selector(".mgpt-ex__editor .cm-line")
    return page


def _go_to_line(page, number, column_moves=0):
    page.locator(".mgpt-ex__editor .cm-content").click()
    page.keyboard.press("Control+Home")
    for _ in range(number - 1):
        page.keyboard.press("ArrowDown")
    assert page.evaluate("() => window.mhaExercise.cursorLine()") == number
    page.keyboard.press("Home")
    for _ in range(column_moves):
        page.keyboard.press("ArrowRight")


def test_a_long_line_does_not_wrap_and_home_end_act_on_the_logical_line(make_page, base_url):
    page = _open(make_page, base_url, 390, 844)
    code = "x = 1\n" + LONG + "\ny = 2\n"
    page.evaluate("(s) => window.mhaExercise.setCode(s)", code)
    line = page.locator(".mgpt-ex__editor .cm-line").nth(1)
    assert line.inner_text() == LONG
    height = page.locator(".mgpt-ex__editor .cm-line").first.evaluate("(el) => el.getBoundingClientRect().height")
    assert line.evaluate("(el) => el.getBoundingClientRect().height") < 1.5 * height  # one row
    scroller = page.locator(".mgpt-ex__editor .cm-scroller")
    assert scroller.evaluate("(el) => el.scrollWidth > el.clientWidth + 200")  # scrolls sideways

    _go_to_line(page, 2, column_moves=20)
    page.keyboard.press("End")
    page.keyboard.insert_text("#E")
    assert page.evaluate("() => window.mhaExercise.getCode()").splitlines()[1] == LONG + "#E"
    page.keyboard.press("Home")
    page.keyboard.insert_text("H")
    assert page.evaluate("() => window.mhaExercise.getCode()").splitlines()[1] == "H" + LONG + "#E"
    page.keyboard.press("End")
    page.keyboard.press("Shift+Home")
    page.keyboard.insert_text("z = 3")
    assert page.evaluate("() => window.mhaExercise.getCode()") == "x = 1\nz = 3\ny = 2\n"
    _go_to_line(page, 2, column_moves=2)
    page.keyboard.press("Shift+End")
    page.keyboard.insert_text(" + 1")
    assert page.evaluate("() => window.mhaExercise.getCode()") == "x = 1\nz  + 1\ny = 2\n"


def test_the_editor_fits_the_column_and_the_whole_starter_at_1280(make_page, base_url):
    page = _open(make_page, base_url, 1280, 900)
    page.evaluate("(s) => window.mhaExercise.setCode(s)", starter())
    editor = page.locator(".mgpt-ex__editor")
    column = page.locator("[data-mha-widget='microgpt-exercise']").bounding_box()
    box = editor.bounding_box()
    assert abs(box["width"] - column["width"]) <= 1, (box, column)
    scroller = page.locator(".mgpt-ex__editor .cm-scroller")
    assert scroller.evaluate("(el) => el.scrollHeight <= el.clientHeight + 1"), scroller.evaluate(
        "(el) => [el.scrollHeight, el.clientHeight]"
    )
    assert (
        page.locator(".mgpt-ex__editor .cm-gutterElement").filter(has_text=str(len(starter().splitlines()))).count()
        >= 1
    )


def test_fourteen_lines_show_at_once_on_a_phone(make_page, base_url):
    page = _open(make_page, base_url, 390, 844)
    page.evaluate("(s) => window.mhaExercise.setCode(s)", starter())
    font = page.locator(".mgpt-ex__editor .cm-content").evaluate("(el) => parseFloat(getComputedStyle(el).fontSize)")
    assert font >= 13, font
    # The learner scrolls the editor's top just under the site's header, then reads without scrolling the page.
    visible = page.evaluate("""() => {
      const header = document.querySelector('.md-header').getBoundingClientRect().bottom;
      const editor = document.querySelector('.mgpt-ex__editor');
      window.scrollBy(0, editor.getBoundingClientRect().top - header - 4);
      const scroller = editor.querySelector('.cm-scroller').getBoundingClientRect();
      const top = Math.max(header, scroller.top), bottom = Math.min(window.innerHeight, scroller.bottom);
      return [...editor.querySelectorAll('.cm-line')].filter((l) => {
        const r = l.getBoundingClientRect();
        return r.height > 0 && r.top >= top - 0.5 && r.bottom <= bottom + 0.5;
      }).length;
    }""")
    assert visible >= 14, visible
