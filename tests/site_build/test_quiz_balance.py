"""The lesson's check-yourself questions cannot be answered by position or by length.

Over every ``div.mha-quiz`` in the built site (the questions written with the
``quiz()`` macro: the lesson pages' and the microgpt page's, with no exemption):

* no option position (A, B, C, ...) holds more than 40 % of the right answers;
* the right answer is the longest option in at most half of the questions;
* every option has its one-sentence reason, and the shown order is the fixed
  shuffle of ``quiz_order`` (the same on every build and visit).
"""

from __future__ import annotations

import html
import importlib.util
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# A quiz inside a door (<details markdown>) is re-serialised by md_in_html: attributes sorted, newlines added.
QUIZ = re.compile(r'<div (?=[^>]*\bclass="mha-quiz")[^>]*\bdata-mha-widget="quiz"[^>]*>.*?</details>\s*</div>', re.S)
OPTION = re.compile(r'<li class="mha-quiz__option" data-correct="(true|false)">(.*?)</li>', re.S)
WHY = re.compile(r'<li class="mha-quiz__why" data-correct="(true|false)">(.*?)</li>', re.S)
QUESTION = re.compile(r'<p class="mha-quiz__question">(.*?)</p>', re.S)


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()


def _quizzes(site: Path) -> list[dict]:
    found = []
    for page in sorted(site.rglob("*.html")):
        for block in QUIZ.findall(page.read_text()):
            options = OPTION.findall(block)
            found.append(
                {
                    "page": str(page.relative_to(site)),
                    "question": _text(QUESTION.search(block).group(1)),
                    "correct": [c == "true" for c, _ in options],
                    "texts": [_text(t) for _, t in options],
                    "whys": WHY.findall(block),
                }
            )
    return found


def _hook():
    spec = importlib.util.spec_from_file_location("evidence_macros", ROOT / "site_src/hooks/evidence_macros.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_right_answers_are_spread_over_positions(built_site):
    quizzes = _quizzes(built_site)
    assert len(quizzes) >= 15, f"only {len(quizzes)} questions found"
    for q in quizzes:
        assert q["correct"].count(True) == 1, q
    positions = Counter(q["correct"].index(True) for q in quizzes)
    worst, count = positions.most_common(1)[0]
    assert count <= 0.4 * len(quizzes), (
        f"position {chr(65 + worst)} holds {count} of {len(quizzes)} right answers ({dict(positions)}); "
        "give one of those questions order_seed=N (see quiz() in evidence_macros.py)"
    )


def test_the_microgpt_questions_are_the_lesson_quiz(built_site):
    """The microgpt page asks its four questions with the same engine, counted above."""
    mine = [q for q in _quizzes(built_site) if q["page"].startswith("microgpt")]
    assert len(mine) == 4, [q["page"] for q in _quizzes(built_site)]
    assert len({q["correct"].index(True) for q in mine}) >= 3  # not one position over and over
    for q in mine:
        right = q["texts"][q["correct"].index(True)]
        assert len(right) < max(len(t) for t in q["texts"]), q["question"]


def test_the_right_answer_is_not_usually_the_longest(built_site):
    quizzes = _quizzes(built_site)
    longest = [
        q["question"] for q in quizzes if len(q["texts"][q["correct"].index(True)]) == max(len(t) for t in q["texts"])
    ]
    assert len(longest) <= 0.5 * len(quizzes), f"{len(longest)} of {len(quizzes)}: {longest}"


def test_every_option_has_its_reason_in_the_shown_order(built_site):
    for q in _quizzes(built_site):
        assert len(q["whys"]) == len(q["texts"]), q["question"]
        assert [c == "true" for c, _ in q["whys"]] == q["correct"], q["question"]
        assert all(_text(w) for _, w in q["whys"]), q["question"]


def test_the_order_is_a_fixed_shuffle():
    hook = _hook()
    order = hook.quiz_order("Is PAD ever a target?", 4)
    assert order == hook.quiz_order("Is PAD ever a target?", 4)  # same on every call
    assert sorted(order) == [0, 1, 2, 3]
    orders = {tuple(hook.quiz_order(f"question {i}", 3)) for i in range(40)}
    assert len(orders) == 6  # every permutation of three options occurs
    shown = hook.quiz_html("Q?", [["right", "why right"], ["wrong", "why wrong"], ["other", "why other"]], 0, "")
    texts = re.findall(r'data-correct="(?:true|false)">(\w+)</li>', shown.split("mha-quiz__whys")[0])
    assert texts == [["right", "wrong", "other"][i] for i in hook.quiz_order("Q?", 3)]


def test_an_option_without_its_reason_is_refused():
    hook = _hook()
    import pytest

    with pytest.raises(hook.MacroError, match=r"each option must be \[text, why\]"):
        hook.quiz_html("Q?", ["right", "wrong"], 0, "")
