"""site_src/js/runtime/bpe.js encodes like Hugging Face tokenizers, on the shipped bpe_tokenizer.json.

The texts: the 240 tokenizer test vectors (Unicode edge cases, quotes,
apostrophes, control characters), a few written here for what BPE alone meets
(characters outside its alphabet, the added "[UNK]" typed in the text, final
sigma, digits), and, when the stories are on disk, 300 stories of the
validation split cut into sentences. Pieces must be equal, exactly.
"""

from __future__ import annotations

import re

import pytest

from export.artefacts import Artefacts
from tests.runtime.test_rng_tokenizer_generation_node import NODE, run_node

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed (make setup needs it for npm ci)")

EXTRA = [
    "The sky got redder!",
    "She wore a red wool hooded coat.",
    "Écoute: naïve café, STRASSE, straße.",
    "ΟΔΟΣ ΣΟΦΟΣ",
    "数字 123 and 4,567.89 — ok?!",
    "a [UNK] b[UNK]c",
    "emoji 🙂🙂 here",
    "tab\there\nnew line",
    "don't can't lily's",
    "!!!???...",
    "x" * 60,
    "zzzzqqqq jjjj",
    "\u00a0nbsp\u2003em",
    "ﬁne ﬂour ①②",
]


def _texts():
    texts = [c["text"] for c in __import__("json").loads(Artefacts().tokenizer_vectors.read_text())["cases"]] + EXTRA
    from export.data import DEFAULT_DATA, load_stories
    from export.windows import split_indices

    if DEFAULT_DATA.is_file():
        source = load_stories(None, log=lambda *_: None)
        for i in split_indices(len(source.stories))["validation"][:300]:
            texts += [s for s in re.split(r"(?<=[.!?])\s+", source.stories[i].text) if s]
    return texts


def test_js_bpe_matches_tokenizers():
    from export.lesson.subwords import load_bpe

    path = Artefacts().bpe_tokenizer
    if not path.is_file():
        pytest.skip("bpe_tokenizer.json not written yet: python -m export.lesson.subwords")
    bpe = load_bpe(path)
    texts = _texts()
    expected = [bpe.encode(t).tokens for t in texts]
    got = run_node(
        """
      const { readFileSync } = await import("node:fs");
      const { BPE } = await rt("bpe.js");
      const enc = new BPE(JSON.parse(readFileSync(payload.path, "utf8")));
      return payload.texts.map((t) => enc.tokens(t));
    """,
        {"path": str(path), "texts": texts},
    )
    bad = [(t, g, e) for t, g, e in zip(texts, got, expected) if g != e]
    assert not bad, f"{len(bad)} of {len(texts)} differ, first: {bad[:3]}"
    assert len(texts) > 250


def test_a_different_tokenizer_json_is_refused_by_name():
    import json

    path = Artefacts().bpe_tokenizer
    if not path.is_file():
        pytest.skip("bpe_tokenizer.json not written yet")
    spec = json.loads(path.read_text())
    spec["pre_tokenizer"] = {"type": "ByteLevel"}
    got = run_node(
        """
      const { BPE } = await rt("bpe.js");
      try { new BPE(payload); return "accepted"; } catch (e) { return e.message; }
    """,
        spec,
    )
    assert "pre-tokenizer ByteLevel is not supported" in got
