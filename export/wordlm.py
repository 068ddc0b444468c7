"""Word-and-punctuation tokenizer and the frequency-ranked vocabulary.

Rules (version ``RULES_VERSION``); the browser tokenizer in ``site_src`` repeats
them exactly and is tested against vectors this module writes:

1. Normalise the text with Unicode NFKC, then lowercase it (``str.lower``).
2. Curly apostrophes (U+2018, U+2019) become ``'``; curly double quotes
   (U+201C, U+201D) become ``"``. Dashes (– —) stay as they are.
3. Whitespace (``str.isspace``) separates tokens and is dropped. Other
   control and format characters (Unicode category C*, e.g. NUL, BEL,
   zero-width joiner) are dropped too, without separating anything.
4. A token is a maximal run of letters and digits (``str.isalnum``). An
   apostrophe joins two such runs into one token, so contractions and
   possessives stay whole: ``can't``, ``lily's``, ``don't``.
5. Every other character is a token on its own: ``.``, ``,``, ``"``, a
   leading or trailing ``'``, each dash and each emoji code point.

So ``Lily can't find 12 balls!`` gives ``lily  can't  find  12  balls  !``.

Unicode version: the rules use the Unicode tables of the Python that builds
the vocabulary (``UNICODE_VERSION``, recorded in vocab.json). A code point
those tables do not assign is category Cn, so rule 3 drops it, whatever a
newer Unicode says it is; it also never joins the NFKC of the text on either
side of it. The browser knows a newer Unicode, so it carries the list of
these code points (``site_src/js/runtime/unicode_unassigned.js``, written by
``python -m export unicode``) and drops exactly them.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from .defaults import VOCAB_SIZE

RULES_VERSION = "wordlm-1"
UNICODE_VERSION = unicodedata.unidata_version

PAD, BOS, EOS, UNK = "<PAD>", "<BOS>", "<EOS>", "<UNK>"
SPECIAL_TOKENS = (PAD, BOS, EOS, UNK)
PAD_ID, BOS_ID, EOS_ID, UNK_ID = 0, 1, 2, 3
SPECIAL_IDS = {"PAD": PAD_ID, "BOS": BOS_ID, "EOS": EOS_ID, "UNK": UNK_ID}

_QUOTE_MAP = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def _is_dropped(ch: str) -> bool:
    return unicodedata.category(ch).startswith("C") and not ch.isspace()


# lesson: tokenize
def tokenize(text: str) -> list[str]:
    """Split ``text`` into lowercase word, number and punctuation tokens."""
    text = unicodedata.normalize("NFKC", text).lower().translate(_QUOTE_MAP)
    text = "".join(ch for ch in text if not _is_dropped(ch))
    tokens: list[str] = []
    word: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isalnum():
            word.append(ch)
        elif ch == "'" and word and i + 1 < n and text[i + 1].isalnum():
            word.append(ch)  # an inner apostrophe keeps the word whole
        else:
            if word:
                tokens.append("".join(word))
                word = []
            if not ch.isspace():
                tokens.append(ch)
        i += 1
    if word:
        tokens.append("".join(word))
    return tokens


@dataclass
class Vocabulary:
    """An id -> token list with the four special tokens at ids 0-3."""

    itos: list[str]
    stoi: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        if tuple(self.itos[:4]) != SPECIAL_TOKENS:
            raise ValueError(f"the first four items must be {SPECIAL_TOKENS}")
        if len(set(self.itos)) != len(self.itos):
            raise ValueError("vocabulary items must be unique")
        self.stoi = {t: i for i, t in enumerate(self.itos)}

    def __len__(self) -> int:
        return len(self.itos)

    # lesson: encode-tokens
    def encode_tokens(
        self, tokens: Iterable[str], boundaries: bool = True
    ) -> list[int]:
        """Look up ids; unknown tokens become UNK. ``boundaries`` wraps in BOS ... EOS."""
        ids = [self.stoi.get(t, UNK_ID) for t in tokens]
        return [BOS_ID, *ids, EOS_ID] if boundaries else ids

    def encode(self, text: str, boundaries: bool = True) -> list[int]:
        return self.encode_tokens(tokenize(text), boundaries=boundaries)

    def decode(self, ids: Iterable[int], skip_special: bool = False) -> list[str]:
        out = [self.itos[int(i)] for i in ids]
        return [t for t in out if t not in SPECIAL_TOKENS] if skip_special else out

    def to_json(self, T: int) -> dict:
        return {
            "rules_version": RULES_VERSION,
            "C": len(self.itos),
            "T": T,
            "special": dict(SPECIAL_IDS),
            "unicode_version": UNICODE_VERSION,
            "itos": list(self.itos),
        }

    def fingerprint(self) -> str:
        return fingerprint(self.itos)


def fingerprint(itos: Sequence[str]) -> str:
    """Identifies a vocabulary (its items in order); checkpoints store it."""
    return hashlib.sha256("\n".join(itos).encode()).hexdigest()[:16]


def unassigned_ranges() -> list[tuple[int, int]]:
    """Inclusive code-point ranges that this Python's Unicode tables do not assign (category Cn)."""
    ranges: list[tuple[int, int]] = []
    for cp in range(0x110000):
        if unicodedata.category(chr(cp)) == "Cn":
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1] = (ranges[-1][0], cp)
            else:
                ranges.append((cp, cp))
    return ranges


UNICODE_TABLE = "site_src/js/runtime/unicode_unassigned.js"


def unicode_table_js() -> str:
    """The browser's copy of ``unassigned_ranges()`` as an ES module."""
    flat = [f"0x{cp:x}" for pair in unassigned_ranges() for cp in pair]
    lines = [", ".join(flat[i : i + 12]) + "," for i in range(0, len(flat), 12)]
    return (
        f"// Written by `python -m export unicode` from Python's unicodedata: do not edit.\n"
        f"// The code points Unicode {UNICODE_VERSION} does not assign, as inclusive ranges\n"
        f"// [first0, last0, first1, last1, ...]. The tokenizer drops them (see tokenizer.js).\n"
        f'export const UNICODE_VERSION = "{UNICODE_VERSION}";\n'
        f"export const UNASSIGNED = [\n"
        + "\n".join("  " + line for line in lines)
        + "\n];\n"
    )


# lesson: build-vocabulary
def build_vocabulary(
    token_lists: Iterable[Sequence[str]], size: int = VOCAB_SIZE
) -> tuple[Vocabulary, Counter]:
    """Rank tokens by frequency (ties broken alphabetically) and keep
    ``size`` items in all."""
    if size <= len(SPECIAL_TOKENS):
        raise ValueError(f"vocabulary size must exceed {len(SPECIAL_TOKENS)}")
    counts: Counter = Counter()
    for tokens in token_lists:
        counts.update(tokens)
    for special in SPECIAL_TOKENS:
        counts.pop(special, None)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    words = [t for t, _ in ranked[: size - len(SPECIAL_TOKENS)]]
    return Vocabulary([*SPECIAL_TOKENS, *words]), counts


def detokenize(tokens: Sequence[str]) -> str:
    """Join tokens into readable text: no space before closing punctuation."""
    out = ""
    for tok in tokens:
        if not out:
            out = tok
        elif tok in {".", ",", "!", "?", ";", ":", ")", "'"} or out.endswith(("(",)):
            out += tok
        else:
            out += " " + tok
    return out


def unicode_command(args) -> None:
    """``python -m export unicode``: the browser tokenizer's table of unassigned code points, from this Python."""
    from pathlib import Path

    from . import atomic

    path = atomic.write_text(Path(args.root) / UNICODE_TABLE, unicode_table_js())
    print(f"wrote {path} (Unicode {UNICODE_VERSION})")
