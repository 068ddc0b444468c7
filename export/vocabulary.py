"""The vocab and tokenizer_vectors stages: vocab.json, and the texts the browser's tokenizer is tested against."""

from __future__ import annotations

import re
from pathlib import Path

from . import atomic
from .artefacts import Artefacts
from .corpus import Corpus
from .wordlm import RULES_VERSION, tokenize

EDGE_CASES = [
    "",
    "   ",
    "\n\t \r\n",
    "Lily found a red ball.",
    "Lily can't find 12 balls!",
    "“Hello,” said Lily’s mom.",
    "‘Quick’ — she said – “now!”",
    "Tom's dog's bone",
    "dogs' toys",
    "'tis",
    "rock 'n' roll",
    "don't!won't",
    "It cost 3.50 dollars, 100% sure.",
    "1st 2nd 3rd 10,000",
    "ＦＵＬＬＷＩＤＴＨ ｔｅｘｔ",
    "ﬁne ﬂowers",
    "café naïve résumé",
    "Straße ÉCOLE",
    "ΣΊΣΥΦΟΣ σοφός",
    "İstanbul",
    "Ｈｅｌｌｏ！",
    "…and then…",
    "emoji 😀 and 👍🏽 and 👨‍👩‍👧",
    "🐶🐱",
    "שלום עולם",
    "مرحبا بالعالم",
    "漢字かなカナ",
    "tab\tseparated\nlines",
    "zero\u200bwidth\u200djoin",
    "bell\x07char nul\x00here",
    "\ufeffbom start",
    "a\u00a0b\u2003c",
    "x\u0301y",
    "<script>alert(1)</script>",
    "C:\\path\\to",
    "e-mail: lily@example.com",
    "#hash @at $5 ^_^ ~ `q`",
    "CAPS LOCK and MiXeD cAsE",
    "the the the the the",
    "O'Neil o'clock ma'am",
    "it's 5 o'clock'",
    "¿Qué? ¡Sí!",
    "½ ¼ ² ³ ⅓",
    "Ⅻ roman",
    "a—b–c-d",
    "(parens) [brackets] {braces}",
]


def tokenizer_vectors(corpus: Corpus, wanted: int = 240) -> dict:
    """Strings with their Python tokens and ids, for the browser tokenizer's tests."""
    texts = list(EDGE_CASES)
    texts.append(" ".join(s.text for s in corpus.source.stories[:6]))  # very long
    stories = corpus.texts("test") + corpus.texts("train")
    step = max(1, len(stories) // (wanted - len(texts)))
    for text in stories[::step]:
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]
        if sentences:
            texts.append(max(sentences, key=len))
        if len(texts) >= wanted:
            break
    cases = []
    for text in texts:
        toks = tokenize(text)
        cases.append(
            {
                "text": text,
                "tokens": toks,
                "ids": corpus.vocab.encode_tokens(toks, boundaries=False),
            }
        )
    return {"rules_version": RULES_VERSION, "cases": cases}


def write_vocabulary(corpus: Corpus, out: Path, log=print) -> None:
    """The vocab stage: vocab.json and the browser tokenizer's test vectors."""
    atomic.write_json(Artefacts(out).vocab, corpus.vocab.to_json(corpus.T), indent=None)
    atomic.write_json(Artefacts(out).tokenizer_vectors, tokenizer_vectors(corpus))
    log(f"wrote {out / 'vocab.json'}, tokenizer_vectors.json")


def vocab_stage(ctx) -> None:
    corpus = ctx.get_corpus()
    path = atomic.write_json(ctx.art.vocab, corpus.vocab.to_json(corpus.T), indent=None)
    print(f"wrote {path}")


def tokenizer_vectors_stage(ctx) -> None:
    print(
        f"wrote {atomic.write_json(ctx.art.tokenizer_vectors, tokenizer_vectors(ctx.get_corpus()))}"
    )


def command(args) -> None:
    """``python -m export vocab``: both files at once."""
    from .corpus import corpus_from_options
    from .cli_checks import check_out

    check_out(args)
    write_vocabulary(corpus_from_options(args), Path(args.out))
