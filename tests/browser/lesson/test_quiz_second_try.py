"""Quizzes let the learner think twice (site_src/js/lesson/quiz.js).

A first wrong choice says "not yet" with the question's hint and keeps the
answer hidden; a second wrong choice, or "Show the answer", shows the answer
and every option's reason. Every question on the site carries its hint.
"""

from __future__ import annotations

import re

import pytest

# As tests/site_build/test_quiz_balance.py finds them (a quiz inside a door is indented, its attributes may move).
QUIZ = re.compile(r'<div (?=[^>]*\bclass="mha-quiz")[^>]*\bdata-mha-widget="quiz"[^>]*>.*?</details>\s*</div>', re.S)
HINT = re.compile(r'<p class="mha-quiz__hint"><strong>Hint:</strong> (.*?)</p>', re.S)


def test_every_question_has_a_one_sentence_hint(built_site):
    quizzes = [(page, block) for page in sorted(built_site.rglob("*.html")) for block in QUIZ.findall(page.read_text())]
    assert len(quizzes) >= 15
    for page, block in quizzes:
        hint = HINT.search(block)
        assert hint, f"{page.relative_to(built_site)}: a question without hint= ({block[:160]}...)"
        text = re.sub(r"<[^>]+>", "", hint.group(1)).strip()
        assert 20 <= len(text) <= 200 and text.count(". ") == 0, text


def _right_and_wrong(quiz):
    right = ord(quiz.locator(".mha-quiz__answer strong").text_content().split()[1][0]) - ord("A")
    n = quiz.locator("input[type=radio]").count()
    wrong = [i for i in range(n) if i != right]
    return right, wrong


@pytest.mark.browser
def test_first_wrong_try_gives_the_hint_second_shows_the_answer(make_page, base_url):
    page, watch = make_page()
    page.goto(base_url + "lesson/2-multihead-operation/")
    quiz = page.locator(".mha-quiz").first
    quiz.locator(".mha-quiz__form").wait_for()
    explanation = quiz.locator(".mha-quiz__explanation")
    feedback = quiz.locator(".mha-quiz__feedback")
    right, wrong = _right_and_wrong(quiz)
    labels = quiz.locator("label.mha-quiz__choice")

    labels.nth(wrong[0]).click()
    quiz.locator("button[type=submit]").click()
    assert feedback.get_attribute("data-result") == "not-yet"
    text = feedback.inner_text()
    assert text.startswith("Not yet.") and "Hint:" in text
    assert explanation.is_hidden()
    assert all(r.is_hidden() for r in quiz.locator(".mha-quiz__reason").all())
    assert "is-tried" in labels.nth(wrong[0]).get_attribute("class")

    labels.nth(wrong[1]).click()
    quiz.locator("button[type=submit]").click()
    assert feedback.get_attribute("data-result") == "wrong"
    assert f"the answer is {chr(65 + right)}" in feedback.inner_text()
    assert explanation.is_visible()
    reasons = quiz.locator(".mha-quiz__reason")
    assert reasons.count() == labels.count() and all(r.is_visible() for r in reasons.all())
    watch.check()


@pytest.mark.browser
def test_a_wrong_try_then_the_right_one_is_correct(make_page, base_url):
    page, watch = make_page()
    page.goto(base_url + "lesson/1-why-more-heads/")
    quiz = page.locator(".mha-quiz").first
    quiz.locator(".mha-quiz__form").wait_for()
    right, wrong = _right_and_wrong(quiz)
    labels = quiz.locator("label.mha-quiz__choice")
    labels.nth(wrong[0]).click()
    page.keyboard.press("Enter")
    assert quiz.locator(".mha-quiz__feedback").get_attribute("data-result") == "not-yet"
    labels.nth(right).click()
    page.keyboard.press("Enter")
    assert quiz.locator(".mha-quiz__feedback").get_attribute("data-result") == "correct"
    assert quiz.locator(".mha-quiz__explanation").is_visible()
    watch.check()


@pytest.mark.browser
def test_the_answer_on_request_by_keyboard(make_page, base_url):
    page, watch = make_page()
    page.goto(base_url + "lesson/3-training-examples/")
    quiz = page.locator(".mha-quiz").first
    quiz.locator(".mha-quiz__form").wait_for()
    right, _ = _right_and_wrong(quiz)
    reveal = quiz.locator(".mha-quiz__reveal")
    reveal.focus()
    page.keyboard.press("Enter")
    assert quiz.locator(".mha-quiz__feedback").get_attribute("data-result") == "shown"
    assert quiz.locator(".mha-quiz__explanation").is_visible()
    assert "is-answer" in quiz.locator("label.mha-quiz__choice").nth(right).get_attribute("class")
    assert reveal.is_hidden()
    watch.check()
