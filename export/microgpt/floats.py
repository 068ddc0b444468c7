"""microgpt's trained model on plain floats: no autograd, for the site and the tests.

``load_trained``, ``forward_attention`` and ``sample_names`` run the model
from its JSON file (``microgpt-trained/1``, written by ``cli.py``). They repeat
microgpt.py's arithmetic in its order: sums run left to right from 0.0, and a
division is a multiplication by ``x ** -1`` exactly where the Value class does
that, so the numbers equal the training-time ones bit for bit. ``sum()`` is
never used on floats: from Python 3.12 on it compensates rounding.

This file depends on the standard library only: the exercise's checker runs
it in the browser (Pyodide) as the module ``microgpt_floats``.
"""

import json
import math
import random

FORMAT = "microgpt-trained/1"


def total(terms):
    """Left-to-right sum from 0.0, never compensated."""
    acc = 0.0
    for t in terms:
        acc += t
    return acc


def linear(vec, mat):
    return [total(w * v for w, v in zip(row, vec)) for row in mat]


def softmax(scores):
    top = max(scores)
    ups = [math.exp(s - top) for s in scores]
    inv = total(ups) ** -1  # the Value model divides as u * total**-1
    return [u * inv for u in ups]


def rmsnorm(vec):
    mean_sq = total(v * v for v in vec) * len(vec) ** -1
    factor = (mean_sq + 1e-5) ** -0.5
    return [v * factor for v in vec]


def head_weights(q, keys, start, head_dim, key_start=None):
    """One head's attention weights: its slice of q against the keys' slice at key_start."""
    key_start = start if key_start is None else key_start
    scale = (head_dim**0.5) ** -1
    scores = [
        total(q[start + d] * key[key_start + d] for d in range(head_dim)) * scale
        for key in keys
    ]
    return softmax(scores)


def blend(weights, values, start, head_dim):
    """Number d is the weighted sum of number start + d of every value."""
    return [
        total(weights[t] * values[t][start + d] for t in range(len(values)))
        for d in range(head_dim)
    ]


def multi_head(q, keys, values, n_head):
    """The heads' results side by side, and each head's weights."""
    head_dim = len(q) // n_head
    out, weights = [], []
    for h in range(n_head):
        w = head_weights(q, keys, h * head_dim, head_dim)
        weights.append(w)
        out.extend(blend(w, values, h * head_dim, head_dim))
    return out, weights


def n_layers(weights):
    return sum(1 for name in weights if name.endswith(".attn_wq"))


def probe_one_head(q, keys, values):
    """The probe: one head over all the numbers, on weights trained for several heads."""
    wide = [total(a * b for a, b in zip(q, key)) * len(q) ** -0.5 for key in keys]
    w = softmax(wide)
    return blend(w, values, 0, len(q)), w


def step(
    weights,
    token,
    pos,
    key_cache,
    value_cache,
    n_head=4,
    trace=None,
    head_mask=None,
    probe=False,
):
    """Float twin of microgpt.gpt_step; with a dict as ``trace``, records layer 0's attention.

    Two ways to change what the model predicts, for the lesson's switches:
    ``head_mask`` (one truthy/falsy per head) knocks a head out by putting 0s
    in place of its numbers before attn_wo, as export/heads.py does for the
    TinyStories models; ``probe=True`` replaces the heads by one head over all
    the numbers (the trace's ``heads_out`` and weights stay the real heads').
    """
    x = rmsnorm([t + p for t, p in zip(weights["wte"][token], weights["wpe"][pos])])
    for layer in range(len(key_cache)):
        pre = f"layer{layer}."
        skip = x
        x = rmsnorm(x)
        q = linear(x, weights[pre + "attn_wq"])
        key_cache[layer].append(linear(x, weights[pre + "attn_wk"]))
        value_cache[layer].append(linear(x, weights[pre + "attn_wv"]))
        keys, values = key_cache[layer], value_cache[layer]
        heads_out, per_head = multi_head(q, keys, values, n_head)
        glued = heads_out
        if probe:
            glued = probe_one_head(q, keys, values)[0]
        elif head_mask is not None:
            d = len(q) // n_head
            glued = [
                0.0 if not head_mask[i // d] else v for i, v in enumerate(heads_out)
            ]
        mixed = linear(glued, weights[pre + "attn_wo"])
        if trace is not None and layer == 0:
            # The alternative the lesson contrasts with: one head over all numbers.
            trace.update(
                x=x,
                q=q,
                k=keys[-1],
                v=values[-1],
                head_weights=per_head,
                single_head_weights=probe_one_head(q, keys, values)[1],
                heads_out=heads_out,
                attn_out=mixed,
            )
        x = [a + b for a, b in zip(mixed, skip)]
        skip = x
        x = rmsnorm(x)
        x = [max(0, h) for h in linear(x, weights[pre + "mlp_fc1"])]
        x = linear(x, weights[pre + "mlp_fc2"])
        x = [a + b for a, b in zip(x, skip)]
    return linear(x, weights["lm_head"])


def load_trained(path):
    """Read a ``microgpt-trained/1`` JSON file and return it as a dict."""
    with open(path, encoding="utf-8") as fh:
        model = json.load(fh)
    if not isinstance(model, dict) or model.get("format") != FORMAT:
        found = model.get("format") if isinstance(model, dict) else type(model).__name__
        raise ValueError(f"{path}: expected format {FORMAT!r}, found {found!r}")
    return model


def forward_attention(weights, uchars, name, n_head=4, head_mask=None, probe=False):
    """Run ``name`` through the trained model and report what attention does.

    Position 0 holds BOS, position i (1..len(name)) the name's i-th letter.
    Returns lists indexed by position: ``tokens``, ``labels`` ("" for BOS),
    ``x`` (the block's input), ``q``, ``keys``, ``values`` (16 numbers each;
    position i attends to keys 0..i), ``head_weights[i][h]`` (head h's weights
    over positions 0..i), ``single_head_weights[i]`` (one head over all 16
    numbers, for comparison), ``heads_out[i]`` (the heads glued, 16 numbers),
    ``attn_out[i]`` (the same after attn_wo) and ``probs[i]`` (next-token
    probabilities; index len(uchars) is BOS: "the name ends"). ``head_mask``
    and ``probe`` (see ``step``) change ``attn_out`` and ``probs`` only.
    """
    if head_mask is not None and len(head_mask) != n_head:
        raise ValueError(
            f"head_mask needs one entry per head ({n_head}), got {len(head_mask)}"
        )
    bos = len(uchars)
    char_to_id = {ch: i for i, ch in enumerate(uchars)}
    unknown = sorted({ch for ch in name if ch not in char_to_id})
    if unknown:
        raise ValueError(f"characters not in the vocabulary: {''.join(unknown)!r}")
    block = len(weights["wpe"])
    if len(name) + 1 > block:
        raise ValueError(f"name too long: at most {block - 1} characters")
    tokens = [bos] + [char_to_id[ch] for ch in name]
    key_cache = [[] for _ in range(n_layers(weights))]
    value_cache = [[] for _ in range(n_layers(weights))]
    fields = (
        "x",
        "q",
        "k",
        "v",
        "head_weights",
        "single_head_weights",
        "heads_out",
        "attn_out",
    )
    out = {f: [] for f in fields}
    out["probs"] = []
    for pos, tok in enumerate(tokens):
        trace = {}
        logits = step(
            weights, tok, pos, key_cache, value_cache, n_head, trace, head_mask, probe
        )
        for f in fields:
            out[f].append(trace[f])
        out["probs"].append(softmax(logits))
    out["keys"] = out.pop("k")
    out["values"] = out.pop("v")
    out["tokens"] = tokens
    out["labels"] = [""] + list(name)
    return out


def sample_names(weights, uchars, n=20, temperature=0.5, seed=42, n_head=4):
    """Generate ``n`` names. ``seed`` is an int or a ``random.Random`` to draw from."""
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    bos = len(uchars)
    vocab = range(bos + 1)
    inv_t = temperature**-1  # the Value model divides by temperature this way
    names = []
    for _ in range(n):
        key_cache = [[] for _ in range(n_layers(weights))]
        value_cache = [[] for _ in range(n_layers(weights))]
        token, letters = bos, []
        for pos in range(len(weights["wpe"])):
            logits = step(weights, token, pos, key_cache, value_cache, n_head)
            probs = softmax([l * inv_t for l in logits])
            token = rng.choices(vocab, weights=probs)[0]
            if token == bos:
                break
            letters.append(uchars[token])
        names.append("".join(letters))
    return names
