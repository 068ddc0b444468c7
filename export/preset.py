"""The held-out preset and the example stories: which story, and which of its words make the prompt.

The measure stage records them in the evidence (``stories``, ``preset``); the
ONNX stage checks parity on the same prompt, so both ask this module.
"""

from __future__ import annotations

import re
from pathlib import Path

from .artefacts import run_dir
from .checkpoints import load_full
from .corpus import Corpus
from .data import CREDIT
from .defaults import PRESET_MAX_NEW, PRESET_SEED
from .generate import generate_text
from .wordlm import tokenize

PRESET_MIN_TOKENS = 8


def story_record(row: int, text: str) -> dict:
    return {
        "row": row,
        "text": text,
        "token_count": len(tokenize(text)),
        "word_count": len(text.split()),
        "credit": CREDIT,
    }


def preset_prompt(text: str, min_tokens: int = PRESET_MIN_TOKENS) -> str:
    """The story's beginning: the shortest run of whole sentences with at least ``min_tokens`` tokens."""
    for match in re.finditer(r"[.!?][\"”’']?(?=\s|$)", text):
        head = text[: match.end()]
        if len(tokenize(head)) >= min_tokens:
            return head.strip()
    words = text.split()
    return " ".join(words[: max(1, len(words) // 2)])


def story_examples(corpus: Corpus) -> dict:
    by_row = {s.row: s.text for s in corpus.source.stories}
    test = [(len(tokenize(by_row[r])), r) for r in corpus.split_rows["test"]]
    shortest = min(test)[1]
    everyone = sorted(
        ((len(tokenize(s.text)), s.row) for s in corpus.source.stories), reverse=True
    )
    long_rows = [r for _, r in everyone[:2]]
    first = corpus.source.stories[0]
    return {
        "excerpt": story_record(first.row, first.text),
        "shortest_test": story_record(shortest, by_row[shortest]),
        "long": [story_record(r, by_row[r]) for r in long_rows],
        "credit": CREDIT,
    }


def preset_of(corpus: Corpus) -> tuple[dict, str]:
    """The held-out preset: the shortest test story and its opening sentences as the prompt."""
    story = story_examples(corpus)["shortest_test"]
    return story, preset_prompt(story["text"])


def preset_continuations(corpus: Corpus, cfg, runs: Path, prompt: str) -> dict:
    out = {}
    for name in cfg.models:
        ckpt = run_dir(runs, name, PRESET_SEED) / "best.pt"
        if not ckpt.is_file():
            continue
        model = load_full(ckpt)
        out[name] = generate_text(
            model, corpus.vocab.itos, prompt, max_new_tokens=PRESET_MAX_NEW
        )
    return out
