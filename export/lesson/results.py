"""Page 5's interpretation figures, derived from ``evidence.json`` alone.

``compute(evidence)`` returns a plain dict that the site build reads through
``site_src/hooks/evidence_macros.py`` (source ``results``) and that
``tests/site_build/test_figures_come_from_files.py`` recomputes to check every figure on the page.
Nothing here is measured anew; it is arithmetic on what the pipeline recorded:

* ``overfitting``: per model, where validation loss was lowest, how far it rose
  by the last update, and the training loss at the end;
* ``parameters``: each model's parameters per part (token table, position
  table, the four attention projections, hidden layer, vocabulary head),
  counted from the protocol's sizes and checked against the recorded total;
* ``attention_cost``: how the attention arithmetic grows with the window,
  per head and over all heads, next to the projections that grow linearly;
* ``data``: how often training revisited each training window, and how many
  parameters there are per training token;
* ``continuations``: repetition in the saved greedy continuations.
"""

from __future__ import annotations

from collections import Counter
from statistics import mean

# Parts of each model, in the order of the forward pass, as (key, label).
PART_LABELS = {
    "token_table": "token table",
    "position_table": "position table",
    "attention": "W_Q, W_K, W_V, W_O",
    "hidden": "hidden layer",
    "vocab_head": "vocabulary head",
}


def _linear(n_in: int, n_out: int) -> int:
    return n_in * n_out + n_out


def parameter_parts(heads: int, C: int, T: int, d: int, hidden: int) -> dict[str, int]:
    """Parameter count per part, following export/multihead.py and export/mlp.py (``heads`` 0: the MLP)."""
    parts = {"token_table": C * d}
    # the MLP concatenates the T token rows: its hidden layer reads T*d numbers
    if not heads:
        parts["hidden"] = _linear(T * d, hidden)
    else:
        parts["position_table"] = T * d
        parts["attention"] = 4 * _linear(d, d)
        parts["hidden"] = _linear(d, hidden)
    parts["vocab_head"] = _linear(hidden, C)
    return parts


def parameters(evidence: dict) -> dict:
    C, T = evidence["vocabulary"]["C"], evidence["vocabulary"]["T"]
    d, hidden = evidence["protocol"]["d_model"], evidence["protocol"]["hidden"]
    out = {}
    for model in evidence["protocol"]["models"]:
        parts = parameter_parts(evidence["protocol"]["heads"][model], C, T, d, hidden)
        total = sum(parts.values())
        recorded = evidence["aggregates"][model]["parameters"]
        if total != recorded:
            raise ValueError(
                f"{model}: the parts add up to {total:,} parameters but evidence.json records "
                f"{recorded:,}; update export/lesson/results.py to the model's layers"
            )
        out[model] = {
            "total": total,
            "parts": {k: {"count": n, "share": n / total} for k, n in parts.items()},
        }
    out["mlp_hidden_inputs"] = T * d
    return out


def attention_cost(evidence: dict, windows: tuple[int, ...] | None = None) -> dict:
    """Multiply-adds of one attention layer when every slot of a w-token window is a receiver.

    Scores (Q Kᵀ) and messages (A V) each take w·w·(d/h) multiply-adds per head:
    w·w·d over all heads, whatever h is. The four projections take 4·w·d·d.
    The weights a head stores are w·w numbers, so h heads store h·w·w.
    The lesson's models predict from the final slot only: its one query row
    costs 2·w·d multiply-adds over all heads (``final_query_total``).
    """
    T, d = evidence["vocabulary"]["T"], evidence["protocol"]["d_model"]
    if "head_sweep" in evidence:  # every head count of the sweep, fewest heads first
        heads = {m["name"]: m["heads"] for m in evidence["head_sweep"]["models"]}
        labels = {m["name"]: m["label"] for m in evidence["head_sweep"]["models"]}
    else:
        heads = {
            m: evidence["protocol"]["heads"][m]
            for m in evidence["protocol"]["models"]
            if evidence["protocol"]["heads"][m] > 0
        }
        labels = {m: evidence["protocol"]["labels"][m] for m in heads}
    windows = windows or (T // 4, T // 2, T, 2 * T, 4 * T, 8 * T)
    rows = []
    for w in windows:
        row = {
            "window": w,
            "scores_and_messages_total": 2 * w * w * d,
            "projections": 4 * w * d * d,
            "final_query_total": 2 * w * d,
            "per_head": {},
            "weights_total": {},
        }
        for model, h in heads.items():
            row["per_head"][model] = 2 * w * w * (d // h)
            row["weights_total"][model] = h * w * w
        row["attention_share"] = row["scores_and_messages_total"] / (
            row["scores_and_messages_total"] + row["projections"]
        )
        rows.append(row)
    return {
        "d": d,
        "T": T,
        "heads": heads,
        "labels": labels,
        "rows": rows,
        "model_row": windows.index(T),
        "break_even_window": 2 * d,
    }


def overfitting(evidence: dict) -> dict:
    out = {}
    for model in evidence["protocol"]["models"]:
        runs = [r for r in evidence["runs"] if r["model"] == model]
        best = [r["best_update"] for r in runs]
        last = [r["trace"][-1][1] for r in runs]
        low = [r["val_loss"] for r in runs]
        train = [r["final_train_loss"] for r in runs]
        out[model] = {
            "runs": len(runs),
            "best_update_min": min(best),
            "best_update_max": max(best),
            "best_share_of_training": max(best) / evidence["protocol"]["updates"],
            "best_val_mean": mean(low),
            "last_val_mean": mean(last),
            "rise_mean": mean(l - b for l, b in zip(last, low)),
            "final_train_mean": mean(train),
            "gap_at_end_mean": mean(l - t for l, t in zip(last, train)),
        }
    return out


def data(evidence: dict) -> dict:
    seen = evidence["protocol"]["updates"] * evidence["protocol"]["batch_size"]
    train_windows = evidence["audit"]["train"]["windows"]
    tokens = evidence["audit"]["train"]["tokens"]
    src = evidence["source"]
    return {
        "windows_seen": seen,
        "passes": seen / train_windows,
        "story_share": src["stories_used"] / src["stories_requested"],
        # The same budget over the planned number of stories, if they were as long on average.
        "passes_planned": seen
        / train_windows
        * src["stories_used"]
        / src["stories_requested"],
        "parameters_per_train_token": {
            m: evidence["aggregates"][m]["parameters"] / tokens
            for m in evidence["protocol"]["models"]
        },
    }


def _ngrams(tokens: list[str], n: int) -> Counter:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def continuations(evidence: dict, n: int = 4) -> dict:
    out = {}
    for model, cont in evidence["preset"]["continuations"].items():
        tokens = cont["tokens"]
        words = [t for t in tokens if any(ch.isalpha() for ch in t)]
        top, count = _ngrams(tokens, n).most_common(1)[0]
        out[model] = {
            "tokens": len(tokens),
            "distinct_words": len(set(words)),
            "words": len(words),
            "distinct_share": len(set(words)) / len(words),
            "top_ngram": " ".join(top),
            "top_ngram_count": count,
            "first_token": tokens[0],
            "pronouns": {p: tokens.count(p) for p in ("he", "she", "it")},
        }
    return {"n": n, "models": out}


def compute(evidence: dict) -> dict:
    return {
        "overfitting": overfitting(evidence),
        "parameters": parameters(evidence),
        "attention_cost": attention_cost(evidence),
        "data": data(evidence),
        "continuations": continuations(evidence),
    }
