"""Stories -> tokens -> vocabulary -> windows, with the audit of each split."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from .data import StorySource, download_from_hub, load_stories
from .defaults import CONTEXT, VOCAB_SIZE
from .windows import (
    SPLIT_FRACTIONS,
    SPLIT_SEED,
    SPLITS,
    WindowSet,
    audit_split,
    make_windows,
    split_indices,
)
from .wordlm import Vocabulary, build_vocabulary, tokenize


@dataclass
class Corpus:
    source: StorySource
    split_rows: dict[str, list[int]]  # source row numbers per split
    tokens: dict[str, list[list[str]]]  # per split, per story
    vocab: Vocabulary
    windows: dict[str, WindowSet]
    audit: dict[str, dict]
    T: int

    def texts(self, split: str) -> list[str]:
        by_row = {s.row: s.text for s in self.source.stories}
        return [by_row[r] for r in self.split_rows[split]]

    def key(self) -> str:
        """Identifies data, split and vocabulary: a finished run is reused only for the same key."""
        h = hashlib.sha256()
        h.update(self.source.sha256.encode())
        h.update(
            repr(sorted((k, tuple(v)) for k, v in self.split_rows.items())).encode()
        )
        h.update("\n".join(self.vocab.itos).encode())
        h.update(str(self.T).encode())
        return h.hexdigest()[:16]


def prepare_corpus(
    source: StorySource,
    C: int = VOCAB_SIZE,
    T: int = CONTEXT,
    split_seed: int = SPLIT_SEED,
) -> Corpus:
    if T < 1:
        raise ValueError(f"the context T must be at least 1, not {T}")
    index = split_indices(len(source.stories), split_seed)
    split_rows = {s: [source.stories[i].row for i in index[s]] for s in SPLITS}
    tokens = {s: [tokenize(source.stories[i].text) for i in index[s]] for s in SPLITS}
    vocab, _ = build_vocabulary(tokens["train"], size=C)  # training stories only
    windows = {
        s: make_windows([vocab.encode_tokens(t) for t in tokens[s]], T) for s in SPLITS
    }
    audit = {s: audit_split(tokens[s], vocab) for s in SPLITS}
    return Corpus(source, split_rows, tokens, vocab, windows, audit, T)


def split_description(split_seed: int = SPLIT_SEED) -> dict:
    return {
        "seed": split_seed,
        "fractions": dict(SPLIT_FRACTIONS),
        "unit": "whole stories",
    }


def corpus_of_evidence(evidence: dict, data=None) -> Corpus:
    """The protocol's corpus again (same stories, split and vocabulary), for stages run after training.

    Refuses a data file or split that differs from the one ``evidence.json`` records.
    """
    source = load_stories(
        data, evidence["source"]["stories_requested"], log=lambda m: None
    )
    if source.sha256 != evidence["source"]["sha256"]:
        raise ValueError(
            f"the data file {source.file} differs from the one evidence.json was made from "
            f"(sha256 {evidence['source']['sha256'][:12]}…); pass that file with --data"
        )
    corpus = prepare_corpus(
        source,
        C=evidence["vocabulary"]["C"],
        T=evidence["vocabulary"]["T"],
        split_seed=evidence["split"]["seed"],
    )
    if corpus.split_rows != evidence["split"]["rows"]:
        raise ValueError(
            "the split rebuilt from the data differs from evidence.json's; rerun `python -m export evidence`"
        )
    return corpus


def corpus_from_options(args) -> Corpus:
    """The corpus ``python -m export``'s options name (export/options.py): the stories file, or the hub's."""
    path = args.data
    if args.from_hub:
        from .data import HUB_REVISION

        dest = (
            Path(args.runs if hasattr(args, "runs") else "runs")
            / "TinyStories-train-hub.txt"
        )
        path, commit = download_from_hub(
            dest, args.stories, args.revision or HUB_REVISION
        )
        print(f"downloaded {args.stories} stories at revision {commit} to {path}")
    source = load_stories(path, args.stories)
    if args.from_hub:
        source = type(source)(**{**source.__dict__, "revision": commit})
    return prepare_corpus(source, C=args.vocab_size, T=args.context)


def audit_command(args) -> None:
    """``python -m export audit``: print the split and its audit."""
    corpus = corpus_from_options(args)
    print(
        json.dumps(
            {
                "source": corpus.source.describe(),
                "vocabulary": len(corpus.vocab),
                "audit": corpus.audit,
            },
            indent=2,
        )
    )
