"""The lesson's main line is short, and its listings are few and clean: a reader who never opens a door follows the argument.

Counted in Chromium, as a learner sees each lesson page: every door closed, after
every widget has drawn (``tests/browser/lesson/visible_words.js`` says what counts as a word and
what is left out). The limits:

* at most 1,000 visible words per lesson page and 4,500 for pages 1–5 together (the
  measure is the main line's argument; the fine print lives on the appendix page);
* at most three code listings open by default per page (the rest behind doors);
* no ``# lesson:`` marker line inside any listing, open or not;
* every page says how long it takes, and every section but the check questions
  opens with its question.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser.lesson.lesson_pages import PAGES, read_pages

PAGE_LIMIT = 1000
LESSON_LIMIT = 4500
OPEN_LISTINGS = 3
COUNT_JS = (Path(__file__).with_name("visible_words.js")).read_text(encoding="utf-8")
WIDGETS_DRAWN = """() => [...document.querySelectorAll('[data-mha-widget]')]
    .every((root) => root.childElementCount > 0 && !root.querySelector('.mha-noscript')
                     && (root.dataset.mhaWidget !== 'quiz' || root.querySelector('form'))
                     && ![...root.querySelectorAll('[role=status]')].some((n) => /^Loading/.test(n.textContent.trim())))"""
# (a widget still saying "Loading…" has drawn a child too: counting then would leave its words out)


@pytest.fixture(scope="module")
def counts(browser, servers):
    return read_pages(browser, servers["isolated"], PAGES, WIDGETS_DRAWN, COUNT_JS)


@pytest.mark.parametrize("path", PAGES)
def test_each_page_stays_within_its_word_budget(counts, path):
    c = counts[path]
    print(f"{path}: {c['words']} words visible ({c['svg_words']} of them figure labels), {c['numbers']} numbers")
    assert c["words"] <= PAGE_LIMIT, f"{path} shows {c['words']} words with every door closed (limit {PAGE_LIMIT})"


def test_the_lesson_stays_within_its_word_budget(counts):
    total = sum(c["words"] for c in counts.values())
    assert total <= LESSON_LIMIT, f"pages 1-5 show {total} words together (limit {LESSON_LIMIT})"


@pytest.mark.parametrize("path", PAGES)
def test_at_most_three_listings_open_and_no_marker_shows(counts, path):
    c = counts[path]
    assert c["listings_open"] <= OPEN_LISTINGS, f"{path} opens {c['listings_open']} of {c['listings']} listings"
    assert not c["marker_lines"], f"{path} shows lesson markers in a listing: {c['marker_lines']}"


@pytest.mark.parametrize("path", PAGES)
def test_each_page_says_how_long_and_each_section_asks(counts, path):
    c = counts[path]
    assert re.fullmatch(r"About \d+ minutes.*", c["time"]), f"{path} does not say how long it takes: {c['time']!r}"
    questions = [s for s in c["sections"] if s != "Check yourself"]
    assert questions and all(s.endswith("?") for s in questions), (
        f"{path}: sections not opening with a question: {questions}"
    )


def test_the_counter_skips_closed_doors_and_listings(browser, servers):
    """The counter itself: text behind a closed door and code do not count; opened doors do."""
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(servers["isolated"] + PAGES[0])
        page.evaluate("""() => {
          const art = document.querySelector('article');
          art.replaceChildren();
          art.insertAdjacentHTML('beforeend',
            '<p>one two 3</p><details><summary>door word</summary><p>hidden hidden hidden</p></details>' +
            '<div class="mha-code"><pre># lesson: x\\ncode code</pre></div><p style="display:none">gone</p>');
        }""")
        closed = page.evaluate(COUNT_JS)
        assert (closed["words"], closed["numbers"], closed["listings_open"]) == (4, 1, 1)
        assert closed["marker_lines"] == ["# lesson: x"]
        page.evaluate("() => { document.querySelector('article details').open = true; }")
        assert page.evaluate(COUNT_JS)["words"] == 7
    finally:
        context.close()
