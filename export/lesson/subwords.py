"""Page 3's tokenizer comparison: words, characters and a byte-pair encoder trained on our stories.

Our models read words and punctuation (``export.wordlm.tokenize``). To show
what the other common choices would make of the same text, this module

* splits the example into characters (after the same Unicode NFKC and
  lowercase normalisation our tokenizer applies; a space is a character too);
* trains a real byte-pair encoder (BPE) with Hugging Face ``tokenizers`` on
  the training stories of the pipeline's split (the same stories the word
  vocabulary is built from), with as many items as our word vocabulary, and
  encodes the example with it.

The pipeline (``python -m export all``, or ``python -m export.lesson.subwords``)
writes two artefacts (paths in ``export/artefacts.py``): the trained encoder
itself in Hugging Face's own format (``bpe_tokenizer.json``: its vocabulary,
merges, normaliser and pre-tokenizer), which page 3's playground encodes with
in the browser (``site_src/js/runtime/bpe.js``), and ``subwords.json``, the
example as three token lists for the page's figure. The site build only reads
them; a test checks that they still equal a fresh training run.
"""

from __future__ import annotations

import argparse
import unicodedata
from pathlib import Path

from .. import atomic
from ..artefacts import Artefacts
from ..data import load_stories
from ..windows import split_indices
from ..wordlm import tokenize

SCHEMA = "mha-subwords/1"
EXAMPLE = "The sky got redder!"
VOCAB_SIZE = (
    4000  # the size of the word vocabulary (C), so neither side gets more items
)
WINDOW = 4  # the window of the page's question: does it hold four words?


# lesson: train-bpe
def train_bpe(texts: list[str], vocab_size: int = VOCAB_SIZE):
    """A byte-pair encoder learned from ``texts``: start from characters,
    merge the most frequent pair."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    bpe = Tokenizer(models.BPE(unk_token="[UNK]"))
    bpe.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    # never merge across spaces or punctuation
    bpe.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=["[UNK]"], show_progress=False
    )
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


def train(data: str | Path | None = None):
    """The encoder trained on the training split of the pipeline's stories, and where they came from."""
    source = load_stories(data, log=lambda *_: None)
    train_texts = [
        source.stories[i].text for i in split_indices(len(source.stories))["train"]
    ]
    return train_bpe(train_texts), source, len(train_texts)


def load_bpe(path: str | Path):
    """The shipped encoder (``bpe_tokenizer.json``), as Hugging Face ``tokenizers`` reads it."""
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(path))


def summary(bpe, source, training_stories: int, text: str = EXAMPLE) -> dict:
    """``subwords.json``: the example three ways, and what the encoder was trained on."""
    import tokenizers

    return {
        "schema": SCHEMA,
        "example": text,
        "window": WINDOW,
        "vocab_size": bpe.get_vocab_size(),
        "requested_vocab_size": VOCAB_SIZE,
        "training_stories": training_stories,
        "data_file": source.file,
        "data_sha256": source.sha256,
        "library": f"tokenizers {tokenizers.__version__}",
        "tokens": three_ways(text, bpe),
    }


def build(data: str | Path | None = None, text: str = EXAMPLE) -> tuple[dict, str]:
    """Train now: (the contents of subwords.json, the text of bpe_tokenizer.json)."""
    bpe, source, n = train(data)
    return summary(bpe, source, n, text), bpe.to_str(pretty=False)


def write(
    out: str | Path | None = None, data: str | Path | None = None
) -> tuple[Path, Path]:
    """Train, then write bpe_tokenizer.json and subwords.json into the artefact folder ``out``."""
    paths = Artefacts(out)
    result, encoder = build(data)
    return atomic.write_text(paths.bpe_tokenizer, encoder), atomic.write_json(
        paths.subwords, result
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", default=None, help="the stories file (default: the pipeline's)"
    )
    parser.add_argument(
        "--out",
        default=None,
        help="the artefact folder (default: wasm_assets/ or $MHA_WASM_ASSETS)",
    )
    args = parser.parse_args(argv)
    for path in write(args.out, args.data):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


def stage(ctx) -> None:
    for path in write(ctx.out, getattr(ctx.args, "data", None)):
        print(f"wrote {path}")
