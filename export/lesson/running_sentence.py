"""The lesson's running sentence read by the four-head model: weights, guess, and each head switched off.

The home page's first figure and page 5's per-head bars show the shipped
four-head model (the ONNX file the browser runs) on one sentence, the one the
example search chose (``export/lesson/example_search.py``): every head's
weights from the last word to the earlier words, the model's next-word guess
with all heads, and for each head switched off alone (its ``head_mask`` entry
0) the probability the model then gives that same guess and what it guesses
instead. Probabilities are the generator's: a softmax over the ids generation
may pick (``export.generate.EXCLUDED_IDS`` set aside), as the browser's
``probabilities()`` computes them.

The page-data stage (``export/lesson/page_data.py``) stores the result under
``running``.
"""

from __future__ import annotations

import numpy as np

TOP = 5  # the guesses listed with all heads on


def softmax_allowed(logits: np.ndarray) -> np.ndarray:
    """Probabilities over the ids generation may pick (the others get 0)."""
    from ..generate import EXCLUDED_IDS

    z = np.array(logits, dtype=np.float64)
    z[list(EXCLUDED_IDS)] = -np.inf
    z -= z.max()
    p = np.exp(z)
    return p / p.sum()


def read(onnx_bytes: bytes, itos: list[str], T: int, sentence: str, heads: int) -> dict:
    """The four-head model on BOS + ``sentence``: weights at the last word, its guess, and each head off."""
    from ..generate import prompt_history
    from ..onnx_export import feeds, session
    from ..windows import context_window
    from ..wordlm import UNK_ID, tokenize

    sess = session(onnx_bytes)
    history = prompt_history(itos, sentence)
    window = np.asarray([context_window(history, T)], dtype=np.int64)
    n = len(history)
    logits, attention = sess.run(["logits", "attention"], feeds(sess, window))
    p = softmax_allowed(logits[0])
    guess = int(np.argmax(p))
    top = [int(i) for i in np.argsort(-p, kind="stable")[:TOP]]
    without = []
    for h in range(heads):
        mask = np.ones(heads, dtype=np.float32)
        mask[h] = 0.0
        q = softmax_allowed(sess.run(["logits"], feeds(sess, window, mask))[0][0])
        instead = int(np.argmax(q))
        without.append(
            {
                "head": h + 1,
                "p_guess": float(q[guess]),
                "guess": itos[instead],
                "p_own_guess": float(q[instead]),
                "changed": instead != guess,
            }
        )
    return {
        "sentence": sentence,
        "tokens": ["<BOS>", *tokenize(sentence)],
        "unknown": [j for j, i in enumerate(history) if i == UNK_ID],
        "weights": [
            [float(w) for w in head[-n:]] for head in attention[0]
        ],  # [head][source], BOS first
        "guess": itos[guess],
        "p_guess": float(p[guess]),
        "top": [{"token": itos[i], "p": float(p[i])} for i in top],
        "without": without,
    }
