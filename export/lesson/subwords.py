"""Page 3's tokenizer comparison: words, characters and a byte-pair encoder trained on our stories.

Our models read words and punctuation (``export.wordlm.tokenize``). To show
what the other common choices would make of the same text, this module

* splits the example into characters (after the same Unicode NFKC and
  lowercase normalisation our tokenizer applies; a space is a character too);
* trains a real byte-pair encoder (BPE) with Hugging Face ``tokenizers`` on
  the training stories of the pipeline's split (the same stories the word
  vocabulary is built from), with as many items as our word vocabulary, and
  encodes the example with it.

The site build calls ``build()`` when the stories are on disk, so the figure
follows the data. ``python -m export.lesson.subwords`` writes the same result
to ``wasm_assets/subwords.json``; the build falls back to that file when the
stories are absent (a checkout without ``../shared/data``), and a test checks
that the file still equals a fresh training run.
"""
from __future__ import annotations

import argparse
import unicodedata
from pathlib import Path

from .. import atomic
from ..data import load_stories
from ..windows import split_indices
from ..wordlm import tokenize

SCHEMA = "mha-subwords/1"
EXAMPLE = "The sky got redder!"
VOCAB_SIZE = 4000  # the size of the word vocabulary (C), so neither side gets more items
WINDOW = 4         # the window of the page's question: does it hold four words?
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "wasm_assets" / "subwords.json"


# lesson: train-bpe
def train_bpe(texts: list[str], vocab_size: int = VOCAB_SIZE):
    """A byte-pair encoder learned from ``texts``: start from characters, merge the most frequent pair."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    bpe = Tokenizer(models.BPE(unk_token="[UNK]"))
    bpe.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    bpe.pre_tokenizer = pre_tokenizers.Whitespace()  # never merge across spaces or punctuation
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["[UNK]"], show_progress=False)
    bpe.train_from_iterator(texts, trainer)
    return bpe


# lesson: three-tokenizers
def three_ways(text: str, bpe) -> dict[str, list[str]]:
    """The same text as words (our rules), as characters, and as learned subwords."""
    return {
        "words": tokenize(text),
        "characters": list(unicodedata.normalize("NFKC", text).lower()),
        "subwords": bpe.encode(text).tokens,
    }
# lesson end


def build(data: str | Path | None = None, text: str = EXAMPLE) -> dict:
    """Train on the training split of the pipeline's stories and tokenize ``text`` three ways."""
    import tokenizers

    source = load_stories(data, log=lambda *_: None)
    train = [source.stories[i].text for i in split_indices(len(source.stories))["train"]]
    bpe = train_bpe(train)
    return {
        "schema": SCHEMA,
        "example": text,
        "window": WINDOW,
        "vocab_size": bpe.get_vocab_size(),
        "requested_vocab_size": VOCAB_SIZE,
        "training_stories": len(train),
        "data_file": source.file,
        "data_sha256": source.sha256,
        "library": f"tokenizers {tokenizers.__version__}",
        "tokens": three_ways(text, bpe),
    }


def write(out: str | Path = DEFAULT_OUT, data: str | Path | None = None) -> Path:
    return atomic.write_json(out, build(data))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=None, help="the stories file (default: the pipeline's)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="where to write subwords.json")
    args = parser.parse_args(argv)
    print(f"wrote {write(args.out, args.data)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
