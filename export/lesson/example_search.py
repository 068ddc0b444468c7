"""Page 1's example sentence, chosen by a search with the trained four-head model.

Page 1 shows a real model reading one short sentence: the one-head model's
single query at the last word, then the four queries of the four-head model at
the same word. The sentence must be one the model can read (every word in
``vocab.json``, no UNK) and one where two heads demonstrably read *different*
earlier words. Rather than hand-pick it, this module

* builds every sentence of a small grammar (who × verb × size × colour ×
  thing, e.g. "lily found a big red ball"), all of it in the vocabulary;
* runs the shipped four-head ONNX model (seed 11, the one the compare page
  runs) on BOS + each sentence and reads the final query's weights per head;
* scores a sentence by its best pair of heads whose favourite earlier word
  differs (BOS and the receiver itself set aside): the smaller of the two
  heads' weights on their favourites;
* runs each candidate again with each head switched off alone (the model's
  ``head_mask`` input) and keeps only candidates where that changes the
  model's guess (its most probable next word) for at least one head, so the
  sentence can also show what a head does to a prediction;
* keeps the highest score among those, and records how typical such a split
  is among all candidates (the share at a threshold that separates them, the
  median score, the chosen one's weights on BOS).

``python -m export.lesson.example_search`` writes ``wasm_assets/example_search.json``
(the path comes from ``export.artefacts``); the page-1 figures read the chosen
sentence from it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys

import numpy as np

from .. import atomic
from ..artefacts import Artefacts
from ..models import most_heads_model, single_head_model

SCHEMA = "mha-example-search/1"
# the model whose two heads page 1 shows reading different words
MODEL = most_heads_model().name
# The grammar of the candidates: every combination is one sentence (all words in the vocabulary).
WHO = ["she", "he", "lily", "tom", "the girl", "the boy"]
VERB = ["found", "saw", "had", "wanted", "got"]
SIZE = ["big", "little", "new", "old", "pretty"]
COLOUR = ["red", "blue", "green", "yellow"]
THING = ["coat", "hat", "dress", "ball", "box", "kite", "car", "doll"]
CLEAR = 0.2  # a split counts as clear when both heads put at least this weight on their different favourites
# A split counts as sharp at half the weight on each favourite: a threshold that separates the candidates
# (about a third pass it), where CLEAR is passed by nearly all and so cannot say what is typical.
SHARP = 0.5


def candidates() -> list[str]:
    return [
        f"{w} {v} {'an' if s[0] in 'aeiou' else 'a'} {s} {c} {t}"
        for w, v, s, c, t in itertools.product(WHO, VERB, SIZE, COLOUR, THING)
    ]


def guess(logits: np.ndarray) -> int:
    """The model's next-word guess: its most probable id that generation may pick (export.generate)."""
    from ..generate import EXCLUDED_IDS

    scores = np.array(logits, dtype=np.float64)
    scores[list(EXCLUDED_IDS)] = -np.inf
    return int(np.argmax(scores))


def split_score(weights: np.ndarray, words: list[str]) -> dict:
    """The best pair of heads whose favourite earlier word differs; ``weights``: [heads, sources], BOS first."""
    receiver = len(words) - 1
    earlier = list(range(1, receiver))  # not BOS (source 0), not the receiver itself
    favourite = [max(earlier, key=lambda j: w[j]) for w in weights]
    best = {"score": 0.0, "heads": None}
    for a, b in itertools.combinations(range(len(weights)), 2):
        if favourite[a] == favourite[b]:
            continue
        score = float(min(weights[a][favourite[a]], weights[b][favourite[b]]))
        if score > best["score"]:
            best = {"score": score, "heads": [a + 1, b + 1]}
    best["favourites"] = [words[j] for j in favourite]
    return best


class GrammarOutsideVocabulary(ValueError):
    """The candidate sentences use words this vocabulary lacks (a tiny test vocabulary, say)."""


def search(assets: Artefacts) -> dict:
    from ..generate import prompt_history
    from ..onnx_export import feeds, session
    from ..windows import context_window
    from ..wordlm import UNK_ID, tokenize

    vocab = json.loads(assets.vocab.read_text(encoding="utf-8"))
    itos, T = vocab["itos"], vocab["T"]
    texts = candidates()
    histories = [prompt_history(itos, t) for t in texts]
    unknown = [t for t, h in zip(texts, histories) if UNK_ID in h]
    if unknown:
        raise GrammarOutsideVocabulary(
            f"candidate words missing from {assets.vocab}: {unknown[:3]} ...; "
            "edit the grammar"
        )
    onnx = assets.model_onnx(MODEL)
    if not onnx.is_file():
        raise FileNotFoundError(f"{onnx} is missing; run `python -m export onnx` first")
    sess = session(onnx.read_bytes())
    windows = np.asarray([context_window(h, T) for h in histories], dtype=np.int64)
    heads = most_heads_model().heads
    rows = []
    for i in range(0, len(windows), 256):
        batch = windows[i : i + 256]
        # [B, heads, T]
        logits, attention = sess.run(["logits", "attention"], feeds(sess, batch))
        # The guess without each head alone (its message left out before W_O).
        off = [
            sess.run(
                ["logits"],
                feeds(
                    sess,
                    batch,
                    np.asarray(
                        [0.0 if h == k else 1.0 for k in range(heads)], dtype=np.float32
                    ),
                ),
            )[0]
            for h in range(heads)
        ]
        for k, a in enumerate(attention):
            n = len(histories[i + k])
            words = ["<BOS>", *tokenize(texts[i + k])]
            w = a[:, -n:]
            full = guess(logits[k])
            changed = [h + 1 for h in range(heads) if guess(off[h][k]) != full]
            rows.append(
                {
                    "text": texts[i + k],
                    "bos": [float(x) for x in w[:, 0]],
                    **split_score(w, words),
                    "weights": w,
                    "guess": itos[full],
                    "guess_changed_without": changed,
                }
            )
    scores = [r["score"] for r in rows]
    eligible = [r for r in rows if r["guess_changed_without"]]
    if not eligible:
        raise ValueError(
            "no candidate's guess changes when one head is switched off; widen the grammar"
        )
    chosen = max(eligible, key=lambda r: r["score"])
    words = ["<BOS>", *tokenize(chosen["text"])]
    # The one-head model on the same sentence: page 1 shows it first (its weight on BOS is explained there).
    one = session(assets.model_onnx(single_head_model().name).read_bytes())
    k = texts.index(chosen["text"])
    _, one_attention = one.run(["logits", "attention"], feeds(one, windows[k : k + 1]))
    single_weights = [float(x) for x in one_attention[0, 0, -len(words) :]]
    return {
        "schema": SCHEMA,
        "sentence": chosen[
            "text"
        ],  # what the page-data stage runs every attention model on (page 1)
        "model": MODEL,
        "checkpoint": onnx.name,
        "grammar": {
            "who": WHO,
            "verb": VERB,
            "size": SIZE,
            "colour": COLOUR,
            "thing": THING,
        },
        "rule": (
            "score = over pairs of heads whose favourite earlier word (BOS and the receiver set aside) "
            "differs, the larger of min(weight of head a on its favourite, weight of head b on its favourite); "
            "chosen: the best score among candidates whose guess changes with some one head switched off"
        ),
        "clear_threshold": CLEAR,
        "n_candidates": len(rows),
        "n_clear": sum(s >= CLEAR for s in scores),
        "share_clear": sum(s >= CLEAR for s in scores) / len(rows),
        "sharp_threshold": SHARP,
        "n_sharp": sum(s >= SHARP for s in scores),
        "share_sharp": sum(s >= SHARP for s in scores) / len(rows),
        "n_guess_changes": len(eligible),
        "median_score": statistics.median(scores),
        "chosen": {
            "text": chosen["text"],
            "tokens": words,
            "score": chosen["score"],
            "rank_share": sum(s < chosen["score"] for s in scores) / len(rows),
            "guess": chosen["guess"],
            "guess_changed_without": chosen["guess_changed_without"],
            "heads": chosen["heads"],
            "favourites": chosen["favourites"],
            "bos": chosen["bos"],
            "weights": [[float(x) for x in head] for head in chosen["weights"]],
            "one_head_weights": single_weights,
        },
        # The heads whose knock-out changes a candidate's guess, only where there are any (the file stays small:
        # the site's offline copy holds it).
        "candidates": [
            {
                "text": r["text"],
                "score": round(r["score"], 6),
                "heads": r["heads"],
                **(
                    {"guess_changed_without": r["guess_changed_without"]}
                    if r["guess_changed_without"]
                    else {}
                ),
            }
            for r in rows
        ],
    }


def write(assets: Artefacts | None = None):
    assets = assets or Artefacts()
    return atomic.write_json(assets.example_search, search(assets))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--out", help="artefact folder (default: wasm_assets/ or $MHA_WASM_ASSETS)"
    )
    args = p.parse_args(argv)
    try:
        path = write(Artefacts(args.out))
    except (ValueError, FileNotFoundError) as exc:
        print(f"example_search: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())


def stage(ctx) -> None:
    try:
        print(f"wrote {write(ctx.art)}")
    except GrammarOutsideVocabulary as exc:
        # Only a vocabulary other than the lesson's (a tiny test run) lacks those everyday words; page 1
        # then keeps the constant sentence of the page-data stage.
        print(f"example_search: skipped, {exc}")
