"""The page-data stage: everything the site's hooks draw or tabulate that is computed, not measured.

The site build only renders. What a page needs beyond the evidence, the
vocabulary and the walkthrough is computed here, once, and written to
``wasm_assets/page_data.json`` (``python -m export pagedata``):

* ``toy``: page 3's Lily sentence through the tokenizer and the windows
  (``export.lesson.walkthrough.lily_example``);
* ``results``: page 5's interpretation figures, arithmetic on the evidence
  (``export.lesson.results``), with the labels of the parameter table's parts;
* ``coat``: page 1's example prefix read by every shipped attention model, the
  final query's weights per head (the ONNX models the browser runs);
* ``running``: the same sentence read by the four-head model for the home
  page's first figure and page 5's per-head bars: its guess, and each head
  switched off (``export.lesson.running_sentence``);
* ``mask``: page 4's mask picture, the model's own ``forward_full`` mask of the
  walkthrough's first example;
* ``heads``: the endings of each head's clearest window as text (page 5).

``inputs`` records the sha256 of every file it read, so
``tests/pipeline/test_page_data_fresh.py`` fails when one of them changed and
the stage was not rerun.
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import atomic
from ..artefacts import Artefacts
from ..digest import file_sha256

SCHEMA = "mha-page-data/1"

# Page 1's example: the prefix whose last token is the receiver. A sentence chosen by a
# search (``wasm_assets/example_search.json``, key "sentence") takes its place when present.
EXAMPLE_SENTENCE = "She wore a red wool hooded coat"


def example_sentence(art: Artefacts) -> str:
    if art.example_search.is_file():
        doc = json.loads(art.example_search.read_text(encoding="utf-8"))
        if (
            isinstance(doc, dict)
            and isinstance(doc.get("sentence"), str)
            and doc["sentence"].strip()
        ):
            return doc["sentence"]
    return EXAMPLE_SENTENCE


def _json(path: Path) -> dict:
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: run the stage that writes it first (python -m export all)"
        )
    return json.loads(path.read_text(encoding="utf-8"))


def attention_models(manifest: dict) -> list[dict]:
    """The shipped attention models, in the manifest's order."""
    return [m for m in manifest["models"] if m["kind"] == "attention"]


def inputs(art: Artefacts) -> list[Path]:
    """The files this stage reads (page 1's sentence file only when it exists)."""
    manifest = _json(art.manifest)
    files = [
        art.evidence,
        art.vocab,
        art.walkthrough,
        art.manifest,
        *(art.root / m["file"] for m in attention_models(manifest)),
    ]
    if art.example_search.is_file():
        files.append(art.example_search)
    # rendered on the microgpt page (export/microgpt/head_effect.py)
    if art.microgpt_heads.is_file():
        files.append(art.microgpt_heads)
    return files


def coat_attention(art: Artefacts, vocab: dict, manifest: dict, sentence: str) -> dict:
    """The final query's weights over BOS + ``sentence`` for every shipped attention model."""
    import numpy as np

    from ..generate import prompt_history
    from ..onnx_export import feeds, session
    from ..windows import context_window
    from ..wordlm import UNK_ID, tokenize

    itos, T = vocab["itos"], vocab["T"]
    history = prompt_history(itos, sentence)
    window = np.asarray([context_window(history, T)], dtype=np.int64)
    n = len(history)
    weights = {}
    for m in attention_models(manifest):
        sess = session((art.root / m["file"]).read_bytes())
        # [1, heads, T], every head on
        _, attention = sess.run(["logits", "attention"], feeds(sess, window))
        weights[m["name"]] = [[float(w) for w in head[-n:]] for head in attention[0]]
    return {
        "sentence": sentence,
        "tokens": ["<BOS>", *tokenize(sentence)],
        "unknown": [j for j, i in enumerate(history) if i == UNK_ID],
        "weights": weights,
    }


def running(art: Artefacts, vocab: dict, manifest: dict, sentence: str) -> dict | None:
    """The shipped model with the most heads on the running sentence (``export.lesson.running_sentence``)."""
    from .running_sentence import read

    if not attention_models(manifest):
        return None  # a pipeline that ships no attention model has no heads to show
    model = max(attention_models(manifest), key=lambda m: m["heads"])
    out = read(
        (art.root / model["file"]).read_bytes(),
        vocab["itos"],
        vocab["T"],
        sentence,
        model["heads"],
    )
    return {"model": model["name"], **out}


def walkthrough_mask(vocab: dict, walkthrough: dict) -> dict:
    """The T x T mask of the walkthrough's first example, from the model's own ``forward_full``."""
    import torch

    from ..multihead import MultiHeadAttentionLM
    from ..windows import context_window

    stoi = {t: i for i, t in enumerate(vocab["itos"])}
    cfg = walkthrough["config"]
    T = cfg["T"]
    x = torch.tensor(
        [context_window([stoi[t] for t in walkthrough["rows"][0]["prefix"]], T)]
    )
    # the mask does not depend on the weights; a small model keeps this fast
    torch.manual_seed(0)
    model = MultiHeadAttentionLM(
        cfg["C"], T, d_model=cfg["heads"] * 2, hidden=4, heads=cfg["heads"]
    )
    with torch.no_grad():
        mask = model.forward_full(x)["mask"][0].tolist()  # True = blocked
    return {
        "ids": x[0].tolist(),
        "blocked": ["".join("1" if b else "0" for b in row) for row in mask],
    }


def head_endings(evidence: dict) -> dict:
    """The last eight tokens of each head's clearest test window, joined as text."""
    from ..wordlm import detokenize

    atlas = evidence.get("heads", {}).get("atlas", {})
    return {
        model: [
            detokenize(h["clearest"]["tokens"][-8:]) if "clearest" in h else None
            for h in entry["heads"]
        ]
        for model, entry in atlas.items()
    }


def build(art: Artefacts) -> dict:
    from .results import PART_LABELS, compute
    from .walkthrough import lily_example

    evidence, vocab = _json(art.evidence), _json(art.vocab)
    walkthrough, manifest = _json(art.walkthrough), _json(art.manifest)
    return json.loads(
        json.dumps(
            {  # tuples become lists, as the page reads them back
                "schema": SCHEMA,
                "inputs": {
                    p.relative_to(art.root).as_posix(): file_sha256(p)
                    for p in inputs(art)
                },
                "toy": lily_example(vocab["itos"]),
                "results": {**compute(evidence), "part_labels": PART_LABELS},
                "coat": coat_attention(art, vocab, manifest, example_sentence(art)),
                "running": running(art, vocab, manifest, example_sentence(art)),
                "mask": walkthrough_mask(vocab, walkthrough),
                "heads": {"clearest_endings": head_endings(evidence)},
            }
        )
    )


def write(art: Artefacts | None = None, log=print) -> Path:
    art = art or Artefacts()
    path = atomic.write_json(art.page_data, build(art))
    log(f"wrote {path}")
    return path


def stale_inputs(art: Artefacts | None = None) -> list[str]:
    """Inputs whose bytes differ from the ones the committed page data was computed from."""
    art = art or Artefacts()
    recorded = _json(art.page_data).get("inputs", {})
    now = {p.relative_to(art.root).as_posix(): p for p in inputs(art)}
    changed = sorted(set(recorded) ^ set(now))
    changed += sorted(
        n for n in set(recorded) & set(now) if file_sha256(now[n]) != recorded[n]
    )
    # `make microgpt` retrained a model the heads file was measured on
    if art.microgpt_heads.is_file():
        from ..microgpt.head_effect import stale_inputs as microgpt_stale

        changed += [
            f"{name} (since microgpt_heads.json)" for name in microgpt_stale(art)
        ]
    return changed


if __name__ == "__main__":
    write()


def stage(ctx) -> None:
    write(ctx.art)
