"""Worked calculations for the lesson pages, computed by the pipeline's own code.

* ``lily_example(real_itos)``: the authored sentence "Lily found a red ball."
  through ``tokenize``, a ten-item toy vocabulary (four specials + the sorted
  tokens), story boundaries, the w = 4 windows of ``export.windows``, other
  window widths, a B = 2 batch, and the same two prefixes in the real
  vocabulary. Pure and cheap: the site build calls it for page 3.
* ``batch_walkthrough(checkpoint, vocab)``: that real B = 2 batch through the
  shipped four-head model (``export.checkpoints.load_compact``: torch and
  numpy only), every stage of ``forward_full`` as small rounded slices with
  full shapes, the loss, and the first steps of generation from the held-out
  preset prompt (given, or read from evidence.json).
  ``python -m export walkthrough`` writes it to ``wasm_assets/walkthrough.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..defaults import CONTEXT
from ..digest import file_sha256
from ..wordlm import PAD_ID, SPECIAL_IDS, SPECIAL_TOKENS, Vocabulary, tokenize

SENTENCE = "Lily found a red ball."
TOY_W = 4
TOY_BATCH_ROWS = (2, 3)  # the two windows whose targets are "a" and "red"
WIDTHS = (2, 4, 6, 8)
VIEW_WIDTHS = (2, 4, 6)
SHOW_SLOTS = (
    5  # last slots shown in the model walkthrough (covers both prefixes plus a PAD)
)
SHOW_COORDS = 6  # leading coordinates shown of each row
ROUND = 4
SAMPLE_TEMPERATURE = 1.0
SAMPLE_SEED = 1
GEN_STEPS = 8


def _row(ids: list[int], itos: list[str]) -> list[str]:
    return [itos[i] for i in ids]


def lily_example(real_itos: list[str] | None = None, T: int = CONTEXT) -> dict:
    """Everything page 3 shows about the toy sentence, as plain JSON-ready values."""
    from ..windows import make_windows

    pieces = tokenize(SENTENCE)
    words = [
        *SPECIAL_TOKENS,
        *sorted(set(pieces)),
    ]  # the toy list: specials first, then sorted tokens
    vocab = Vocabulary(words)
    ids = vocab.encode_tokens(pieces, boundaries=True)
    windows = make_windows([ids], TOY_W)
    X, y = windows.all()
    rows = []
    for i, (ctx, tgt) in enumerate(zip(X.tolist(), y.tolist())):
        rows.append(
            {
                "row": i,
                "t": i + 1,
                "context_ids": ctx,
                "context_tokens": _row(ctx, words),
                "target_id": tgt,
                "target_token": words[tgt],
                "pads": ctx.count(PAD_ID),
                "full": PAD_ID not in ctx,
            }
        )
    history = ids[:6]
    batch = [rows[i] for i in TOY_BATCH_ROWS]
    n = len(rows)
    out = {
        "sentence": SENTENCE,
        "tokens": pieces,
        "n_tokens": len(pieces),
        "n_words": len(SENTENCE.split()),
        "C": len(words),
        "n_special": len(SPECIAL_TOKENS),
        "vocab": [{"id": i, "token": t} for i, t in enumerate(words)],
        "special": dict(SPECIAL_IDS),
        "blue_plain": vocab.encode_tokens(["blue"], boundaries=False),
        "blue_bounded": vocab.encode_tokens(["blue"], boundaries=True),
        "ids": ids,
        "n_ids": len(ids),
        "id_tokens": _row(ids, words),
        "red_position": ids.index(vocab.stoi["red"]),
        "red_id": vocab.stoi["red"],
        "w": TOY_W,
        "rows": rows,
        "n_targets": n,
        "n_padded_rows": sum(1 for r in rows if not r["full"]),
        "n_full_rows": sum(1 for r in rows if r["full"]),
        "X_shape": list(X.shape),
        "y_shape": list(y.shape),
        "targets_by_width": {str(w): len(make_windows([ids], w)) for w in WIDTHS},
        "history": _row(history, words),
        "views": {str(w): _row(history[-w:], words) for w in VIEW_WIDTHS},
        "batch": {
            "rows": list(TOY_BATCH_ROWS),
            "X": [r["context_ids"] for r in batch],
            "y": [r["target_id"] for r in batch],
            "X_shape": [len(batch), TOY_W],
            "y_shape": [len(batch)],
        },
        "batch_sizes_B2": [len(range(n)[s : s + 2]) for s in range(0, n, 2)],
    }
    if real_itos is not None:
        stoi = {t: i for i, t in enumerate(real_itos)}
        prefixes = [["<BOS>", "lily", "found"], ["<BOS>", "lily", "found", "a"]]
        answers = ["a", "red"]
        missing = [t for p in prefixes for t in p[1:] + answers if t not in stoi]
        if missing:
            raise ValueError(f"the real vocabulary lacks {missing}")
        real_rows = []
        for p, a in zip(prefixes, answers):
            p_ids = [stoi[t] for t in p]
            real_rows.append(
                {
                    "prefix": p,
                    "prefix_ids": p_ids,
                    "pads": T - len(p),
                    "target": a,
                    "target_id": stoi[a],
                    "x": [PAD_ID] * (T - len(p)) + p_ids,
                }
            )
        out["real"] = {
            "C": len(real_itos),
            "T": T,
            "rows": real_rows,
            "X": [r["x"] for r in real_rows],
            "y": [r["target_id"] for r in real_rows],
            "X_shape": [len(real_rows), T],
            "ids": {t: stoi[t] for t in ["lily", "found", "a", "red"]},
        }
    return out


def _r(t, digits: int = ROUND):
    """Tensor -> nested lists of rounded floats (None for -inf / nan)."""
    import math

    def conv(x):
        if isinstance(x, list):
            return [conv(v) for v in x]
        if isinstance(x, bool):
            return x
        if isinstance(x, float) and not math.isfinite(x):
            return None
        return round(x, digits) if isinstance(x, float) else x

    return conv(t.tolist())


def batch_walkthrough(
    checkpoint: str | Path,
    vocab_path: str | Path,
    evidence_path: str | Path | None = None,
    prompt: str | None = None,
) -> dict:
    import torch
    import torch.nn.functional as F

    from ..checkpoints import check_vocabulary, load_compact
    from ..generate import EXCLUDED_IDS, generate_ids, prompt_history
    from ..windows import context_window

    vocab = json.loads(Path(vocab_path).read_text())
    itos = vocab["itos"]
    model = load_compact(checkpoint)
    check_vocabulary(model, itos, str(vocab_path))
    T = model.T
    lily = lily_example(itos, T)
    X = torch.tensor(lily["real"]["X"], dtype=torch.long)
    y = torch.tensor(lily["real"]["y"], dtype=torch.long)
    S = SHOW_SLOTS
    slots = list(range(T - S, T))
    with torch.no_grad():
        token_rows = model.token_embedding(X)
        position_rows = model.position_embedding(torch.arange(T))
        out = model.forward_full(X)
        fast_logits, fast_A = model(X, return_attention=True)
        logits = out["logits"]
        loss = F.cross_entropy(logits, y)
        per_row = F.cross_entropy(logits, y, reduction="none")
        probs = torch.softmax(logits, dim=-1)
        wo_update = out["updated"] - out["E"]
    heads, dh = model.heads, model.head_dim
    rows = []
    for b in range(X.shape[0]):
        top = torch.topk(probs[b], 5)
        rank = int((probs[b] > probs[b, y[b]]).sum()) + 1
        rows.append(
            {
                "prefix": lily["real"]["rows"][b]["prefix"],
                "target": itos[int(y[b])],
                "target_id": int(y[b]),
                "slot_tokens": [itos[int(i)] for i in X[b, T - S :]],
                "slot_ids": X[b, T - S :].tolist(),
                "real_slots": int(X[b].ne(PAD_ID).sum()),
                "token_rows": _r(token_rows[b, T - S :, :SHOW_COORDS]),
                "position_rows": _r(position_rows[T - S :, :SHOW_COORDS]),
                "E": _r(out["E"][b, T - S :, :SHOW_COORDS]),
                "q_final": _r(out["Q"][b, :, -1, :4]),
                "k_final": _r(out["K"][b, :, -1, :4]),
                "v_final": _r(out["V"][b, :, -1, :4]),
                "scores": _r(
                    out["scores"][b, :, T - S :, T - S :].masked_fill(
                        out["mask"][b, None, T - S :, T - S :], float("-inf")
                    )
                ),
                "scores_final": _r(out["scores"][b, :, -1, T - S :]),
                "mask": out["mask"][b, T - S :, T - S :].tolist(),
                "A": _r(out["A"][b, :, T - S :, T - S :]),
                "A_final_sum": _r(out["A"][b, :, -1, :].sum(-1)),
                "messages_final": _r(out["messages"][b, :, -1, :4]),
                "joined_final": _r(out["joined"][b, -1, :SHOW_COORDS]),
                "wo_final": _r(wo_update[b, -1, :SHOW_COORDS]),
                "updated_final": _r(out["updated"][b, -1, :SHOW_COORDS]),
                "hidden": _r(out["hidden"][b, :SHOW_COORDS]),
                "hidden_active": int(out["hidden"][b].gt(0).sum()),
                "logits": _r(logits[b, :SHOW_COORDS]),
                "target_logit": round(float(logits[b, y[b]]), ROUND),
                "target_probability": float(probs[b, y[b]]),
                "target_rank": rank,
                "loss": float(per_row[b]),
                "top": [
                    {"token": itos[int(i)], "id": int(i), "p": float(p)}
                    for p, i in zip(top.values, top.indices)
                ],
            }
        )
    shapes = {k: list(v.shape) for k, v in out.items()}
    shapes.update(
        {
            "X": list(X.shape),
            "y": list(y.shape),
            "token_rows": list(token_rows.shape),
            "position_table": list(position_rows.shape),
        }
    )
    result = {
        "schema": "mha-walkthrough/1",
        "checkpoint": Path(checkpoint).name,
        "checkpoint_sha256": file_sha256(checkpoint),
        "config": model.config(),
        "heads": heads,
        "head_dim": dh,
        "shown_slots": slots,
        "shown_coords": SHOW_COORDS,
        "shapes": shapes,
        "rows": rows,
        "loss": float(loss),
        "final_query_path_max_diff": float((fast_logits - logits).abs().max()),
        "final_query_attention_max_diff": float(
            (fast_A - out["A"][:, :, -1]).abs().max()
        ),
    }
    if prompt is None and evidence_path and Path(evidence_path).is_file():
        prompt = json.loads(Path(evidence_path).read_text())["preset"]["prompt"]
    if prompt is not None:
        history = prompt_history(itos, prompt)
        window = context_window(history, T)
        with torch.no_grad():
            first = model(torch.tensor([window]))[0]
        allowed = first.clone()
        allowed[list(EXCLUDED_IDS)] = float("-inf")
        p_all = torch.softmax(allowed, -1)
        top = torch.topk(p_all, 5)
        raw_best = int(first.argmax())
        greedy, greedy_eos = generate_ids(model, history, GEN_STEPS)
        sampled, sampled_eos = generate_ids(
            model, history, GEN_STEPS, temperature=SAMPLE_TEMPERATURE, seed=SAMPLE_SEED
        )
        result["generation"] = {
            "prompt": prompt,
            "history_ids": history,
            "history_tokens": [itos[i] for i in history],
            "history_length": len(history),
            "pads": T - len(history),
            "excluded": {itos[i]: i for i in EXCLUDED_IDS},
            "raw_best": itos[raw_best],
            "raw_best_excluded": raw_best in EXCLUDED_IDS,
            "top": [
                {"token": itos[int(i)], "id": int(i), "p": float(p)}
                for p, i in zip(top.values, top.indices)
            ],
            "steps": GEN_STEPS,
            "greedy_tokens": [itos[i] for i in greedy],
            "greedy_ended_with_eos": greedy_eos,
            "sample_temperature": SAMPLE_TEMPERATURE,
            "sample_seed": SAMPLE_SEED,
            "sampled_tokens": [itos[i] for i in sampled],
            "sampled_ended_with_eos": sampled_eos,
        }
    return result


def write(
    checkpoints: Path, assets: Path, prompt: str | None = None, log=print
) -> Path:
    """walkthrough.json; the preset ``prompt`` comes from the evidence stage, or from evidence.json."""
    from .. import atomic

    from ..artefacts import Artefacts
    from ..models import most_heads_model

    art = Artefacts(assets)
    # the shipped model with most heads
    ckpt = Path(checkpoints) / art.checkpoint(most_heads_model().name).name
    data = batch_walkthrough(ckpt, art.vocab, art.evidence, prompt=prompt)
    path = atomic.write_json(art.walkthrough, data, indent=None)
    log(f"wrote {path} (B = 2 walkthrough, loss {data['loss']:.4f})")
    return path


def stage(ctx) -> None:
    """The preset's prompt is the measurements' (the evidence's), so page 4 walks the lesson's own sentence."""
    from ..evidence import measurements

    write(
        ctx.checkpoints,
        ctx.out,
        prompt=measurements(ctx.out, ctx.runs)["preset"]["prompt"],
    )
