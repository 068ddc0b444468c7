"""A lesson, not a wall of doors: a reader who opens none still follows the argument.

A *door* is anything hidden until a click: a ``<details>`` block (a quiz's own
"Show the answer" excepted) or a set of tabs (``lesson_items.js`` finds them).

* At most three doors per lesson page, and never two in a row without main-line
  content (a block that shows words, or a figure, table or widget) between them.
* Quizzes stand in the open: none sits behind a door.
* The fine print has one home, the appendix "How the numbers were measured", linked
  from the lesson pages it serves and linking back to each of them.
* Nothing was lost on the way: INVENTORY lists every figure, table, quiz and widget the
  lesson pages held before this round (written from the built site before anything
  moved); each is found afterwards on a lesson page or the appendix.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.lesson.lesson_pages import PAGES, read_pages

pytestmark = pytest.mark.browser

APPENDIX = "lesson/how-measured/"
MAX_DOORS = 3
ITEMS_JS = Path(__file__).with_name("lesson_items.js").read_text(encoding="utf-8")

# Every figure, table, quiz and widget of pages 1-5 before the fine print moved to the appendix,
# as lesson_items.js names them (a quiz or table by the start of its question, caption
# or header row; a number that comes from the evidence is left out of the key).
INVENTORY = [
    # page 1
    "figure fig-coat-query",
    "figure fig-coat-heads",
    "figure fig-fisherman-queries",
    "widget query_keys",
    "widget message_plane",
    "widget two_source",
    "quiz Can one head's single set of weights put 0.8 on river",
    "quiz Does training tell one head to follow places and the other",
    "quiz In the fisherman sentence, which token is the receiver",
    # page 2
    "figure fig-operation-flow",
    "widget predict_check",
    "widget head_explorer",
    *(
        f"widget worksheet {m}"
        for m in ("E", "W_Q", "Q", "W_K", "K", "W_V", "V", "scores", "A", "H", "concat", "W_O", "update", "output")
    ),
    "quiz Why is the weight of receiver 2 on source 6 exactly zero?",
    "quiz In the worksheet, how many numbers are in one head's message",
    "quiz What does the residual step add?",
    "table quantity | size in the worksheet",
    "table quantity | worksheet | trained four-head model",
    # page 3
    "figure fig-tokenizers",
    "widget token_playground",
    "quiz With this padding rule, does w = 8 give more targets than w = 4",
    "-token story fed to the model as one input?",
    "quiz A model reads a window of four tokens. Does that window always hold",
    "quiz If a story contains three sentences, how many BOS and EOS markers",
    "quiz Have the token IDs in X become embeddings yet?",
    "table split | stories | ordinary tokens | windows",
    "table The toy vocabulary: four special items",
    "table position | 0 | 1 | 2 | 3",
    "table Input windows x (token and id) and their targets",
    "table The same two prefixes in the real vocabulary",
    # page 4
    "figure fig-model-map",
    "figure fig-mask",
    "widget stepper",
    "widget walkthrough",
    "quiz In “BOS lily found”, which sources may the query at “found” read?",
    "quiz EOS is never an input in our windows.",
    "quiz During generation, the model picks the next token with a softmax",
    "table Token rows for “BOS lily found”",
    "table Position rows of the same slots",
    "table E = token row + position row",
    "table The final slot's query (“found”), per head",
    "table Head 1 scores over the shown slots",
    "table Which source (column) each receiver (row) may read",
    "table Weights of the final receiver's query",
    "table Messages at “found”, per head",
    "table example | target | probability of the target | its rank | loss",
    "table The five most probable next tokens for the second example",
    "table Next-token probabilities after the prompt",
    # page 5
    "figure fig-head-sweep",
    "figure fig-head-growth",
    "figure fig-toy-curves",
    "figure fig-toy-attention",
    "figure fig-toy-summary",
    "figure fig-head-atlas",
    "figure fig-parameters",
    "figure fig-traces",
    "figure fig-traces-zoom",
    "widget head_growth",
    "quiz A model has a test perplexity of 4.",
    "quiz After update",
    "quiz Why do we report test perplexity from the checkpoint chosen",
    "table model | seed | chosen update | validation loss",
    "table heads × width | seed 11 | seed 29 | seed 47",
    "table heads used | test perplexity | change | top token changed",
    # the knock-out quiz, now asked after the table it reasons from (section 6)
    "quiz Switched off alone, head",
    "table Average share of the final position's attention per kind of source",
    "table Parameters per part, biases included",
    "table Multiply-adds of one attention layer",
]
# Page 5's head-count comparison (its sentences, table and spread quiz) is being rewritten
# as paired intervals by another change; its items are found by what stays: the
# model column and a quiz about the spread.
INVENTORY += ["table model | test perplexity", "quiz Suppose two heads"]


@pytest.fixture(scope="module")
def pages(browser, servers):
    return read_pages(
        browser,
        servers["isolated"],
        [*PAGES, APPENDIX],
        "() => !document.querySelector('[data-mha-widget] .mha-noscript')",
        ITEMS_JS,
    )


@pytest.mark.parametrize("path", PAGES)
def test_at_most_three_doors_never_two_in_a_row(pages, path):
    got = pages[path]
    assert len(got["doors"]) <= MAX_DOORS, f"{path} has {len(got['doors'])} doors: {got['doors']}"
    seq = got["sequence"]
    for before, after in zip(seq, seq[1:]):
        assert not ("door" in before and "door" in after), (
            f"{path}: doors {before['door']!r} and {after['door']!r} follow each other with nothing between"
        )


@pytest.mark.parametrize("path", [*PAGES, APPENDIX])
def test_quizzes_stand_in_the_open(browser, servers, path):
    page = browser.new_page()
    try:
        page.goto(servers["isolated"] + path)
        hidden = page.evaluate("""() => [...document.querySelectorAll('.mha-quiz__question')]
            .filter((q) => q.parentElement.closest('details:not(.mha-quiz__explanation), .tabbed-set'))
            .map((q) => q.textContent.trim().slice(0, 60))""")
    finally:
        page.close()
    assert not hidden, f"{path} hides quizzes behind a door: {hidden}"


def test_the_appendix_is_linked_both_ways(pages):
    appendix_links = pages[APPENDIX]["links"]
    linking = [p for p in PAGES if any("how-measured" in h for h in pages[p]["links"])]
    assert {"lesson/1-why-more-heads/", "lesson/3-training-examples/", "lesson/5-results/"} <= set(linking), linking
    for path in linking:
        slug = path.split("/")[1]
        assert any(slug in h for h in appendix_links), f"the appendix does not link back to {path}"


def test_nothing_that_was_on_the_pages_went_missing(pages):
    found = [item for got in pages.values() for item in got["items"]]
    missing = [want for want in INVENTORY if not any(want in item for item in found)]
    assert not missing, f"not found on pages 1-5 or the appendix: {missing}"
