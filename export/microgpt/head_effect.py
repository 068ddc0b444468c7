"""Where microgpt's heads matter, measured over the whole names list.

``python -m export microgpt_heads`` (a stage of the graph, export/stages.py)
reads the names microgpt trained on and the two trained models (four heads,
``microgpt-trained.json``; its one-head twin, ``microgpt-one-head.json``) and
writes ``microgpt_heads.json``:

* ``loss``: the mean next-letter loss (cross-entropy in nats, every prediction
  of every name counted once: each letter and the name's end) of the four-head
  model, of the same model with one head or every head switched off, and of
  the one-head twin;
* ``gain``: what attention is worth, in loss: every head off minus every
  head on, for each model, and the twin's loss minus the four-head one's;
* ``effect``: how far switching heads off moves the next-letter distribution,
  as the total-variation distance (half the summed absolute differences of the
  27 probabilities: the share of probability that moves, 0 to 1), averaged
  over every prediction, and per letter just read (``by_letter``; ``lean``:
  per head, the letters whose predictions move most without it);
* ``top``: the prefixes (distinct: after "soph" the model predicts the same
  whatever name follows) where switching one head off, or all of them, moves
  the distribution most, each with a name of the list that has the prefix.

Switching a head off is the lesson's knock-out: its numbers become 0 before
attn_wo (``floats.step``'s ``head_mask``). The arithmetic here is numpy in
float64, all names at once; tests/pipeline/test_microgpt_head_effect.py
recomputes the list and checks its top entries against the plain-float
model the page runs.
"""

from __future__ import annotations

from pathlib import Path

from ..digest import file_sha256
from .cli import NamesFileError, read_names
from .floats import load_trained

FORMAT = "microgpt-heads/1"
TOP = 8  # prefixes listed per setting
LEAN_LETTERS = 3  # letters named per head in ``lean``
LEAN_MIN_SHARE = 0.01  # ... among letters read before at least 1 % of all predictions


def _rmsnorm(x):
    import numpy as np

    return x * (np.mean(x * x, axis=-1, keepdims=True) + 1e-5) ** -0.5


def encode_names(names, uchars, block_size):
    """Token ids [BOS, letters..., BOS] padded to block_size + 1, and each name's number of predictions."""
    import numpy as np

    bos = len(uchars)
    ids = {ch: i for i, ch in enumerate(uchars)}
    tokens = np.full((len(names), block_size + 1), bos, dtype=np.int64)
    counts = np.zeros(len(names), dtype=np.int64)
    for row, name in enumerate(names):
        seq = [bos] + [ids[ch] for ch in name] + [bos]
        n = min(block_size, len(seq) - 1)
        tokens[row, : n + 1] = seq[: n + 1]
        counts[row] = n
    return tokens, counts


def next_letter_probs(model: dict, tokens, head_masks):
    """Probabilities [mask, name, position, vocab] for every mask (one 0/1 per head) at every position.

    Position i has read tokens 0..i (BOS and i letters); the masks act where
    floats.step's head_mask does, on the glued heads before attn_wo.
    """
    import numpy as np

    if model["config"]["n_layer"] != 1:
        raise ValueError(
            "microgpt_heads measures a one-block microgpt; this file has "
            f"{model['config']['n_layer']} blocks"
        )
    W = {k: np.asarray(v, dtype=np.float64) for k, v in model["weights"].items()}
    n_head = model["config"]["n_head"]
    inp = tokens[:, :-1]
    N, T = inp.shape
    d = W["wte"].shape[1] // n_head
    x = _rmsnorm(W["wte"][inp] + W["wpe"][:T][None])
    pre = "layer0."
    q, k, v = (_rmsnorm(x) @ W[pre + m].T for m in ("attn_wq", "attn_wk", "attn_wv"))
    split = lambda a: a.reshape(N, T, n_head, d).transpose(0, 2, 1, 3)  # noqa: E731  [N, head, T, d]
    scores = split(q) @ split(k).transpose(0, 1, 3, 2) * d**-0.5
    # no look ahead
    scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    heads = (w @ split(v)).transpose(0, 2, 1, 3)  # [N, T, head, d]
    outs = []
    for mask in head_masks:
        glued = (
            heads * np.asarray(mask, dtype=np.float64)[None, None, :, None]
        ).reshape(N, T, n_head * d)
        y = glued @ W[pre + "attn_wo"].T + x
        outs.append(
            np.maximum(_rmsnorm(y) @ W[pre + "mlp_fc1"].T, 0) @ W[pre + "mlp_fc2"].T + y
        )
    probs = []
    for z in outs:
        logits = z @ W["lm_head"].T
        e = np.exp(logits - logits.max(-1, keepdims=True))
        probs.append(e / e.sum(-1, keepdims=True))
    return np.stack(probs)


def _settings(n_head):
    """(key, head mask): every head on, each head off alone, every head off."""
    on = [1] * n_head
    return (
        [("all_on", on)]
        + [
            (f"head{h + 1}_off", [0 if i == h else 1 for i in range(n_head)])
            for h in range(n_head)
        ]
        + [("all_off", [0] * n_head)]
    )


def _mean_loss(probs, tokens, valid):
    import numpy as np

    target = tokens[:, 1:]
    p = np.take_along_axis(probs, target[..., None], axis=-1)[..., 0]
    return float(-np.log(p)[valid].mean())


def measure(names, four: dict, one: dict, top=TOP) -> dict:
    """The whole document but ``inputs``: losses, mean effects, effects by letter, top prefixes."""
    import numpy as np

    uchars = four["uchars"]
    if one["uchars"] != uchars:
        raise ValueError(
            "the two microgpt files have different letters: train them on the same names file"
        )
    n_head = four["config"]["n_head"]
    block = four["config"]["block_size"]
    tokens, counts = encode_names(names, uchars, block)
    # [N, T]: a prediction the loss counts
    valid = np.arange(block)[None, :] < counts[:, None]
    settings = _settings(n_head)
    probs = next_letter_probs(four, tokens, [m for _, m in settings])
    twin = next_letter_probs(one, tokens, [[1] * one["config"]["n_head"]])[0]
    loss = {key: _mean_loss(p, tokens, valid) for (key, _), p in zip(settings, probs)}
    loss["one_head_twin"] = _mean_loss(twin, tokens, valid)
    loss["one_head_twin_off"] = _mean_loss(
        next_letter_probs(one, tokens, [[0] * one["config"]["n_head"]])[0],
        tokens,
        valid,
    )
    tv = 0.5 * np.abs(probs[1:] - probs[0][None]).sum(-1)  # [setting, N, T]
    tv_twin = 0.5 * np.abs(twin - probs[0]).sum(-1)
    off = [key for key, _ in settings[1:]]
    effect = {key: float(tv[s][valid].mean()) for s, key in enumerate(off)}
    effect["one_head_twin"] = float(tv_twin[valid].mean())

    # By the letter just read (BOS: nothing read yet), every prediction counted.
    read = tokens[:, :-1]
    labels = [*uchars, ""]
    by_letter = []
    for tok, label in enumerate(labels):
        where = valid & (read == tok)
        n = int(where.sum())
        if n:
            by_letter.append(
                {
                    "letter": label,
                    "predictions": n,
                    "effect": {
                        key: float(tv[s][where].mean()) for s, key in enumerate(off)
                    },
                }
            )

    # Which letters lean on which head: per head, the letters whose predictions move most without it.
    common = [
        r
        for r in by_letter
        if r["letter"] and r["predictions"] >= LEAN_MIN_SHARE * int(valid.sum())
    ]
    lean = [
        {
            "head": h + 1,
            "letters": [
                {"letter": r["letter"], "effect": r["effect"][f"head{h + 1}_off"]}
                for r in sorted(common, key=lambda r: -r["effect"][f"head{h + 1}_off"])[
                    :LEAN_LETTERS
                ]
            ],
        }
        for h in range(n_head)
    ]
    gain = {
        "four_heads_attention": loss["all_off"] - loss["all_on"],
        "one_head_attention": loss["one_head_twin_off"] - loss["one_head_twin"],
        "one_head_minus_four": loss["one_head_twin"] - loss["all_on"],
    }

    # Distinct prefixes: the first name of the list (file order) that has each, and how many names share it.
    first, shared = {}, {}
    for row, name in enumerate(names):
        for i in range(int(counts[row])):
            prefix = name[:i]
            shared[prefix] = shared.get(prefix, 0) + 1
            first.setdefault(prefix, (row, i))
    rows = np.array([r for r, _ in first.values()])
    cols = np.array([c for _, c in first.values()])
    prefixes = list(first)
    top_lists = {}
    for s, key in enumerate(off):
        values = tv[s][rows, cols]
        order = sorted(range(len(prefixes)), key=lambda j: (-values[j], prefixes[j]))[
            :top
        ]
        top_lists[key] = [
            _entry(
                names,
                uchars,
                probs,
                s + 1,
                rows[j],
                cols[j],
                prefixes[j],
                float(values[j]),
                shared[prefixes[j]],
            )
            for j in order
        ]
    return {
        "measure": "total variation distance between next-letter distributions (0: unchanged, 1: disjoint)",
        "names": len(names),
        "trained_steps": four["config"]["steps"],
        "predictions": int(valid.sum()),
        "distinct_prefixes": len(prefixes),
        "loss": loss,
        "gain": gain,
        "effect": effect,
        "by_letter": by_letter,
        "lean": lean,
        "top": top_lists,
    }


def _entry(names, uchars, probs, s, row, col, prefix, value, shared):
    symbols = [*uchars, "end"]
    before, after = probs[0][row, col], probs[s][row, col]
    return {
        "name": names[row],
        "prefix": prefix,
        "tv": value,
        "names_with_prefix": shared,
        "top_before": symbols[int(before.argmax())],
        "p_before": float(before.max()),
        "top_after": symbols[int(after.argmax())],
        "p_after": float(after.max()),
    }


def build(names_path, four_path, one_path, top=TOP) -> dict:
    four, one = load_trained(four_path), load_trained(one_path)
    names = read_names(names_path)
    digest = file_sha256(names_path)
    for path, model in ((four_path, four), (one_path, one)):
        if model["source"]["sha256"] != digest:
            raise NamesFileError(
                f"{path} was trained on another names file (sha256 {model['source']['sha256'][:12]}…, "
                f"{names_path} has {digest[:12]}…): pass the names file it was trained on with --names"
            )
    return {
        "format": FORMAT,
        "inputs": {
            Path(four_path).name: file_sha256(four_path),
            Path(one_path).name: file_sha256(one_path),
            "names": digest,
        },
        **measure(names, four, one, top),
    }


def stale_inputs(art) -> list[str]:
    """The model files whose bytes changed since ``microgpt_heads.json`` was written (``make microgpt``)."""
    import json

    recorded = json.loads(art.microgpt_heads.read_text(encoding="utf-8")).get(
        "inputs", {}
    )
    return sorted(
        p.name
        for p in (art.microgpt_trained, art.microgpt_one_head)
        if recorded.get(p.name) != file_sha256(p)
    )


def write(art, names_path=None, log=print) -> Path | None:
    """The stage: measure and write, or say why not (a folder without the two microgpts, such as a tiny test run)."""
    import os

    from export import atomic

    from .cli import DEFAULT_NAMES

    missing = [
        p.name for p in (art.microgpt_trained, art.microgpt_one_head) if not p.is_file()
    ]
    if missing:
        log(
            f"microgpt_heads: skipped, {' and '.join(missing)} not in {art.root} (make microgpt writes them)"
        )
        return None
    names_path = names_path or os.environ.get("NAMES_PATH") or DEFAULT_NAMES
    path = atomic.write_json(
        art.microgpt_heads,
        build(names_path, art.microgpt_trained, art.microgpt_one_head),
    )
    log(f"wrote {path}")
    return path


def stage(ctx) -> None:
    write(ctx.art, getattr(ctx.args, "names", None))
