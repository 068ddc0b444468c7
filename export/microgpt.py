"""microgpt, rewritten for this lesson: a whole GPT in plain Python.

A character-level language model for first names, built from nothing but the
standard library. Every number in it is a Python float wrapped in a tiny
automatic-differentiation class, so the training loop can be read line by line.
The algorithm follows Andrej Karpathy's microgpt (MIT): one transformer block of
width 16, a context of 16 positions, four attention heads of four numbers each,
RMSNorm instead of LayerNorm, no bias terms, a ReLU MLP of width 64, and Adam
with a learning rate that falls linearly to zero. Training shows the model one
name per step for 1,000 steps; then it invents 20 names at temperature 0.5.

Same random draws, same numbers
-------------------------------
The random generator is consumed exactly as the original program consumes it:
seed 42, one shuffle of the names, one Gaussian draw (mean 0, std 0.08) per
weight in state-dict order (wte, wpe, lm_head, then attn_wq, attn_wk, attn_wv,
attn_wo, mlp_fc1, mlp_fc2 of layer 0; row by row, column by column), nothing
during training, then one ``choices`` call per sampled letter. We draw from a
private ``random.Random(42)``, which yields the very stream that
``random.seed(42)`` gives the module-level functions, without disturbing the
caller's global generator. Every sum runs left to right in the original's
order, so the trained weights, the losses and the samples are bit-for-bit those
of the original program (checked once against it; the results are pinned in
tests/test_microgpt.py).

Where the multi-head attention lives
------------------------------------
The lesson site highlights the lines of this file that implement multi-head
attention. They are the lines strictly between two marker comments inside
``gpt_step``: the one reading "--- multi-head attention begins ---" and the one
reading "--- multi-head attention ends ---" (each a ``#`` comment alone on its
line). ``multi_head_line_range()`` returns their 1-based, inclusive line
numbers; a page can also find the two markers by text.

Fast inference on plain floats
------------------------------
``load_trained``, ``forward_attention`` and ``sample_names`` run the trained
model from its JSON with ordinary floats, no autograd. They repeat the model's
arithmetic in the same order (explicit left-to-right sums, division written as
multiplication by ``x ** -1`` exactly where the autograd class does it), so
their numbers equal the training-time ones exactly. A JavaScript or Pyodide
port should keep that order too; note that ``sum()`` on floats compensates
rounding from Python 3.12 on, which is why the float path never calls it.

Command line
------------
``python -m export.microgpt --names PATH --out wasm_assets/microgpt-trained.json
[--steps 1000]``. Without ``--names`` the list is read from ``$NAMES_PATH``, or
else ``../shared/data/names/names.txt``. A missing, empty or non-UTF-8 names
file ends the program with a one-line message and exit status 2.

The JSON written (``"format": "microgpt-trained/1"``), keys in this order:

* ``config``: n_layer, n_embd, block_size, n_head, head_dim, steps,
  learning_rate, beta1, beta2, eps, seed, temperature;
* ``uchars``: the characters, whose positions are the token ids;
* ``bos``: the id of the begin/end-of-name token (``len(uchars)``);
* ``vocab_size``: ``len(uchars) + 1``;
* ``weights``: name -> matrix (list of rows of floats), for ``wte``, ``wpe``,
  ``lm_head`` and ``layer0.attn_wq``, ``attn_wk``, ``attn_wv``, ``attn_wo``,
  ``mlp_fc1``, ``mlp_fc2``; a matrix with ``out`` rows maps ``in`` numbers to
  ``out`` numbers (row ``i`` dotted with the input gives output ``i``);
* ``losses``: the training loss after each step (``steps`` floats);
* ``samples``: the 20 names generated after training;
* ``source``: file name, SHA-256 of its bytes, number of names, credit.

Floats are written at full precision, and the output depends only on the input
file and the step count, so two runs give byte-identical files.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import sys
import tempfile

# ---------------------------------------------------------------------------
# Settings. These are microgpt's; the exported JSON records them.
# ---------------------------------------------------------------------------
N_LAYER = 1          # transformer blocks stacked
N_EMBD = 16          # numbers per vector inside the model
BLOCK_SIZE = 16      # positions the model can see (longest name: 15 letters)
N_HEAD = 4           # attention heads working side by side
HEAD_DIM = N_EMBD // N_HEAD   # numbers each head gets: 4
MLP_HIDDEN = 4 * N_EMBD       # width of the MLP's hidden layer: 64
INIT_STD = 0.08      # spread of the random starting weights
LEARNING_RATE = 0.01
BETA1, BETA2, EPS = 0.85, 0.99, 1e-8   # Adam's settings
NUM_STEPS = 1000     # training steps, one name each
SEED = 42
TEMPERATURE = 0.5    # below 1: sampling prefers the likelier letters
NUM_SAMPLES = 20     # names generated after training

FORMAT = "microgpt-trained/1"
CREDIT = "makemore names.txt, Andrej Karpathy, MIT"
DEFAULT_NAMES = "../shared/data/names/names.txt"
DEFAULT_OUT = "wasm_assets/microgpt-trained.json"
MHA_BEGIN = "# --- multi-head attention begins ---"
MHA_END = "# --- multi-head attention ends ---"


class NamesFileError(ValueError):
    """The names file cannot be used: absent, unreadable, not UTF-8, or empty."""


# ---------------------------------------------------------------------------
# 1. Data: one name per line.
# ---------------------------------------------------------------------------
def read_names(path):
    """Return the non-blank lines of ``path``, stripped, in file order."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        raise NamesFileError(f"names file not found: {path}") from None
    except OSError as exc:
        raise NamesFileError(f"cannot read names file {path}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NamesFileError(
            f"names file {path} is not valid UTF-8 (bad byte at offset {exc.start})"
        ) from None
    # Split on \n, \r\n or \r, as a file opened in text mode would.
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    names = [line.strip() for line in lines if line.strip()]
    if not names:
        raise NamesFileError(f"names file {path} contains no names")
    return names


def file_sha256(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


# ---------------------------------------------------------------------------
# 2. Tokens: each distinct character is one id; one extra id marks where a
#    name starts and stops (BOS, placed right after the characters).
# ---------------------------------------------------------------------------
def build_vocab(names):
    """Sorted distinct characters of ``names``, and the BOS id that follows them."""
    uchars = sorted(set("".join(names)))
    return uchars, len(uchars)


def encode(name, char_to_id, bos):
    """BOS, the name's letters, BOS: the model learns to start and to stop."""
    return [bos] + [char_to_id[ch] for ch in name] + [bos]


# ---------------------------------------------------------------------------
# 3. Autograd: a number that remembers how it was made.
#
# Each Value keeps its inputs and, for each input, how much the result moves
# when that input moves (the local derivative). backward() walks the graph from
# the loss to the leaves and applies the chain rule, so every weight ends up
# holding d(loss)/d(weight) in .grad.
# ---------------------------------------------------------------------------
def _as_value(x):
    """Wrap a plain number so it can join a computation graph."""
    return x if isinstance(x, Value) else Value(x)


class Value:
    __slots__ = ("data", "grad", "_inputs", "_local")

    def __init__(self, data, inputs=(), local=()):
        self.data = data        # the number itself
        self.grad = 0.0         # d(loss)/d(this number), filled in by backward()
        self._inputs = inputs   # the Values this one was computed from
        self._local = local     # d(this)/d(input), one per input

    def __add__(self, other):
        other = _as_value(other)
        return Value(self.data + other.data, (self, other), (1.0, 1.0))

    def __mul__(self, other):
        other = _as_value(other)
        a, b = self.data, other.data
        return Value(a * b, (self, other), (b, a))   # d(ab)/da = b, d(ab)/db = a

    def __pow__(self, k):
        # k is a plain number (the model uses -1 and -0.5).
        x = self.data
        return Value(x ** k, (self,), (k * x ** (k - 1),))

    def log(self):
        x = self.data
        return Value(math.log(x), (self,), (1 / x,))

    def exp(self):
        x = self.data
        return Value(math.exp(x), (self,), (math.exp(x),))

    def relu(self):
        x = self.data
        return Value(max(0, x), (self,), (float(x > 0),))

    # Everything else is built from the operations above.
    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-other)

    def __truediv__(self, other):
        return self * other ** -1

    def __radd__(self, other):    # other + self, when other is a plain number
        return self + other

    def __rmul__(self, other):
        return self * other

    def __rsub__(self, other):
        return other + (-self)

    def __rtruediv__(self, other):
        return other * self ** -1

    def backward(self):
        """Fill .grad of every Value this one depends on."""
        # Order the graph so that each node comes after all of its inputs
        # (depth-first, inputs in the order they were given; an explicit
        # stack instead of recursion, so deep graphs cannot overflow it).
        order, seen = [], {self}
        stack = [(self, iter(self._inputs))]
        while stack:
            node, pending = stack[-1]
            for child in pending:
                if child not in seen:
                    seen.add(child)
                    stack.append((child, iter(child._inputs)))
                    break
            else:
                stack.pop()
                order.append(node)
        # Walk it from the loss backwards, handing each node's gradient on.
        self.grad = 1.0
        for node in reversed(order):
            for child, local in zip(node._inputs, node._local):
                child.grad += local * node.grad


# ---------------------------------------------------------------------------
# 4. Parameters: named matrices of random Values.
# ---------------------------------------------------------------------------
def init_state(rng, vocab_size, std=INIT_STD):
    """All weights, drawn in a fixed order: the order of the names below."""
    def matrix(rows, cols):
        return [[Value(rng.gauss(0, std)) for _ in range(cols)] for _ in range(rows)]

    state = {
        "wte": matrix(vocab_size, N_EMBD),     # one vector per token
        "wpe": matrix(BLOCK_SIZE, N_EMBD),     # one vector per position
        "lm_head": matrix(vocab_size, N_EMBD),  # vector -> score per token
    }
    for layer in range(N_LAYER):
        state[f"layer{layer}.attn_wq"] = matrix(N_EMBD, N_EMBD)
        state[f"layer{layer}.attn_wk"] = matrix(N_EMBD, N_EMBD)
        state[f"layer{layer}.attn_wv"] = matrix(N_EMBD, N_EMBD)
        state[f"layer{layer}.attn_wo"] = matrix(N_EMBD, N_EMBD)
        state[f"layer{layer}.mlp_fc1"] = matrix(MLP_HIDDEN, N_EMBD)
        state[f"layer{layer}.mlp_fc2"] = matrix(N_EMBD, MLP_HIDDEN)
    return state


def flatten(state):
    """Every weight Value in one list, in state-dict order."""
    return [p for mat in state.values() for row in mat for p in row]


# ---------------------------------------------------------------------------
# 5. The model. Building blocks first, then one step of the GPT: a token at a
#    position goes in, a score for every possible next token comes out.
# ---------------------------------------------------------------------------
def linear(vec, mat):
    """Matrix times vector: output i is row i of ``mat`` dotted with ``vec``."""
    return [sum(w_ij * v_j for w_ij, v_j in zip(row, vec)) for row in mat]


def softmax(scores):
    """Scores -> probabilities (subtracting the largest score keeps exp() small)."""
    top = max(s.data for s in scores)
    ups = [(s - top).exp() for s in scores]
    norm = sum(ups)
    return [u / norm for u in ups]


def rmsnorm(vec):
    """Rescale ``vec`` so that its mean square is (about) 1."""
    mean_sq = sum(v * v for v in vec) / len(vec)
    factor = (mean_sq + 1e-5) ** -0.5
    return [v * factor for v in vec]


def gpt_step(state, token, pos, key_cache, value_cache):
    """Next-token scores (logits) for ``token`` at position ``pos``.

    ``key_cache[layer]`` and ``value_cache[layer]`` hold the keys and values of
    the earlier positions; this step appends its own, so attention looks only
    backwards (causal attention without a mask).
    """
    x = [t + p for t, p in zip(state["wte"][token], state["wpe"][pos])]
    x = rmsnorm(x)  # kept even though the block normalises again: the residual path sees it

    for layer in range(N_LAYER):
        pre = f"layer{layer}."                         # names of this block's weights
        # Attention: this position asks (query), every position so far answers (key, value).
        skip = x
        x = rmsnorm(x)
        q = linear(x, state[pre + "attn_wq"])
        key_cache[layer].append(linear(x, state[pre + "attn_wk"]))
        value_cache[layer].append(linear(x, state[pre + "attn_wv"]))
        keys, values = key_cache[layer], value_cache[layer]
        # --- multi-head attention begins ---
        heads_out = []
        for head in range(N_HEAD):
            lo = head * HEAD_DIM                      # this head's numbers: lo .. lo+3
            q_part = q[lo:lo + HEAD_DIM]
            k_parts = [key[lo:lo + HEAD_DIM] for key in keys]
            v_parts = [val[lo:lo + HEAD_DIM] for val in values]
            scores = [sum(q_part[d] * k_part[d] for d in range(HEAD_DIM)) / HEAD_DIM ** 0.5
                      for k_part in k_parts]
            attn = softmax(scores)                    # how much to take from each position
            blend = [sum(attn[t] * v_parts[t][d] for t in range(len(v_parts)))
                     for d in range(HEAD_DIM)]
            heads_out.extend(blend)                   # glue the 4 numbers on: 16 after 4 heads
        x = linear(heads_out, state[pre + "attn_wo"])  # one matrix mixes the heads
        # --- multi-head attention ends ---
        x = [a + b for a, b in zip(x, skip)]
        # MLP: widen to 64, keep the positive part, narrow back to 16.
        skip = x
        x = rmsnorm(x)
        x = linear(x, state[pre + "mlp_fc1"])
        x = [h.relu() for h in x]
        x = linear(x, state[pre + "mlp_fc2"])
        x = [a + b for a, b in zip(x, skip)]

    return linear(x, state["lm_head"])


def sequence_loss(state, tokens):
    """Average cross-entropy of predicting each next token of ``tokens``."""
    steps = min(BLOCK_SIZE, len(tokens) - 1)
    key_cache = [[] for _ in range(N_LAYER)]
    value_cache = [[] for _ in range(N_LAYER)]
    per_token = []
    for pos in range(steps):
        probs = softmax(gpt_step(state, tokens[pos], pos, key_cache, value_cache))
        per_token.append(-probs[tokens[pos + 1]].log())
    return (1 / steps) * sum(per_token)


# ---------------------------------------------------------------------------
# 6. Training: one name per step, Adam, learning rate falling linearly to 0.
# ---------------------------------------------------------------------------
def _progress(total, enabled):
    """A tqdm bar on stderr if tqdm is installed, else a plain counter line."""
    if not enabled:
        return lambda step, loss: None, lambda: None
    try:
        from tqdm import tqdm
    except ImportError:
        def tick(step, loss):
            if step % 10 == 0 or step == total:
                print(f"\rmicrogpt: step {step}/{total}  loss {loss:.4f}",
                      end="", file=sys.stderr, flush=True)
        return tick, lambda: print(file=sys.stderr)
    bar = tqdm(total=total, desc="microgpt", unit="step", file=sys.stderr)

    def tick(step, loss):
        bar.set_postfix_str(f"loss {loss:.4f}", refresh=False)
        bar.update(1)
    return tick, bar.close


def train(names, steps=NUM_STEPS, seed=SEED, progress=False):
    """Train microgpt on ``names``.

    Returns a dict with ``weights`` (plain floats), ``losses`` (one per step),
    ``uchars``, ``bos`` and ``rng``: the random generator in the state the
    original program leaves it in before sampling.
    """
    if steps < 1:
        raise ValueError("steps must be at least 1")
    rng = random.Random(seed)        # same stream as random.seed(seed)
    docs = list(names)
    if not docs:
        raise NamesFileError("no names to train on")
    rng.shuffle(docs)                # random draw 1: the order of the names
    uchars, bos = build_vocab(docs)
    char_to_id = {ch: i for i, ch in enumerate(uchars)}
    state = init_state(rng, len(uchars) + 1)   # random draws 2..: the weights
    params = flatten(state)

    mom = [0.0] * len(params)     # Adam: running mean of each gradient
    sq = [0.0] * len(params)      # Adam: running mean of each squared gradient
    losses = []
    tick, done = _progress(steps, progress)
    try:
        for step in range(steps):
            tokens = encode(docs[step % len(docs)], char_to_id, bos)
            loss = sequence_loss(state, tokens)
            loss.backward()

            lr = LEARNING_RATE * (1 - step / steps)
            for i, p in enumerate(params):
                mom[i] = BETA1 * mom[i] + (1 - BETA1) * p.grad
                sq[i] = BETA2 * sq[i] + (1 - BETA2) * p.grad ** 2
                mom_hat = mom[i] / (1 - BETA1 ** (step + 1))   # undo the pull towards 0
                sq_hat = sq[i] / (1 - BETA2 ** (step + 1))     # of the first few steps
                p.data -= lr * mom_hat / (sq_hat ** 0.5 + EPS)
                p.grad = 0.0
            losses.append(loss.data)
            tick(step + 1, loss.data)
    finally:
        done()

    weights = {name: [[p.data for p in row] for row in mat] for name, mat in state.items()}
    return {"weights": weights, "losses": losses, "uchars": uchars, "bos": bos, "rng": rng}


# ---------------------------------------------------------------------------
# 7. Fast inference on plain floats (for the site and the tests).
#    Same operations, same order as the Value model above.
# ---------------------------------------------------------------------------
def _total(terms):
    """Left-to-right sum starting from 0.0 (never compensated, unlike sum() in 3.12+)."""
    acc = 0.0
    for t in terms:
        acc += t
    return acc


def _linear(vec, mat):
    return [_total(w_ij * v_j for w_ij, v_j in zip(row, vec)) for row in mat]


def _softmax(scores):
    top = max(scores)
    ups = [math.exp(s - top) for s in scores]
    inv = _total(ups) ** -1          # the Value model divides as u * norm**-1
    return [u * inv for u in ups]


def _rmsnorm(vec):
    mean_sq = _total(v * v for v in vec) * len(vec) ** -1
    factor = (mean_sq + 1e-5) ** -0.5
    return [v * factor for v in vec]


def _n_layer(weights):
    return sum(1 for name in weights if name.endswith(".attn_wq"))


def _float_step(weights, token, pos, key_cache, value_cache, n_head=N_HEAD, trace=None):
    """Float twin of ``gpt_step``; if ``trace`` is a dict, records the layer-0 details."""
    x = [t + p for t, p in zip(weights["wte"][token], weights["wpe"][pos])]
    x = _rmsnorm(x)
    for layer in range(len(key_cache)):
        w = weights
        pre = f"layer{layer}."
        skip = x
        x = _rmsnorm(x)
        q = _linear(x, w[pre + "attn_wq"])
        key_cache[layer].append(_linear(x, w[pre + "attn_wk"]))
        value_cache[layer].append(_linear(x, w[pre + "attn_wv"]))
        keys, values = key_cache[layer], value_cache[layer]
        head_dim = len(q) // n_head
        heads_out, head_weights = [], []
        for head in range(n_head):
            lo = head * head_dim
            q_part = q[lo:lo + head_dim]
            scores = [_total(q_part[d] * key[lo + d] for d in range(head_dim)) * (head_dim ** 0.5) ** -1
                      for key in keys]
            attn = _softmax(scores)
            head_weights.append(attn)
            heads_out.extend(_total(attn[t] * values[t][lo + d] for t in range(len(values)))
                             for d in range(head_dim))
        mixed = _linear(heads_out, w[pre + "attn_wo"])
        if trace is not None and layer == 0:
            # The alternative the lesson contrasts with: one head over all numbers.
            wide = [_total(a * b for a, b in zip(q, key)) * len(q) ** -0.5 for key in keys]
            trace.update(x=x, q=q, k=keys[-1], v=values[-1], head_weights=head_weights,
                         single_head_weights=_softmax(wide), heads_out=heads_out,
                         attn_out=mixed)
        x = [a + b for a, b in zip(mixed, skip)]
        skip = x
        x = _rmsnorm(x)
        x = [max(0, h) for h in _linear(x, w[pre + "mlp_fc1"])]
        x = _linear(x, w[pre + "mlp_fc2"])
        x = [a + b for a, b in zip(x, skip)]
    return _linear(x, weights["lm_head"])


def load_trained(path):
    """Read a ``microgpt-trained/1`` JSON file and return it as a dict."""
    with open(path, encoding="utf-8") as fh:
        model = json.load(fh)
    if model.get("format") != FORMAT:
        raise ValueError(f"{path}: expected format {FORMAT!r}, found {model.get('format')!r}")
    return model


def forward_attention(weights, uchars, name, n_head=N_HEAD):
    """Run ``name`` through the trained model and report what attention does.

    Position 0 holds BOS, position i (1..len(name)) the name's i-th letter.
    Returns a dict of lists, indexed by position:

    * ``tokens``: token ids; ``labels``: the letters, with "" for BOS;
    * ``x``: the block input, rmsnorm(rmsnorm(wte[token] + wpe[pos]));
    * ``q``, ``keys``, ``values``: 16-number vectors (keys[i] and values[i]
      belong to position i; position i attends to keys 0..i);
    * ``head_weights[i][h]``: head h's attention weights over positions 0..i;
    * ``single_head_weights[i]``: weights of one head using all 16 numbers
      (scores q.k / sqrt(16), softmax) for comparison;
    * ``heads_out[i]``: the heads' results glued together (16 numbers);
      ``attn_out[i]``: the same after attn_wo;
    * ``probs[i]``: next-token probabilities after the prefix ending at i
      (temperature 1; index ``len(uchars)`` is BOS, i.e. "the name ends").
    """
    bos = len(uchars)
    char_to_id = {ch: i for i, ch in enumerate(uchars)}
    unknown = sorted({ch for ch in name if ch not in char_to_id})
    if unknown:
        raise ValueError(f"characters not in the vocabulary: {''.join(unknown)!r}")
    block = len(weights["wpe"])
    if len(name) + 1 > block:
        raise ValueError(f"name too long: at most {block - 1} characters")
    tokens = [bos] + [char_to_id[ch] for ch in name]
    n_layer = _n_layer(weights)
    key_cache = [[] for _ in range(n_layer)]
    value_cache = [[] for _ in range(n_layer)]
    fields = ("x", "q", "k", "v", "head_weights", "single_head_weights", "heads_out", "attn_out")
    out = {f: [] for f in fields}
    out["probs"] = []
    for pos, tok in enumerate(tokens):
        trace = {}
        logits = _float_step(weights, tok, pos, key_cache, value_cache, n_head, trace)
        for f in fields:
            out[f].append(trace[f])
        out["probs"].append(_softmax(logits))
    out["keys"] = out.pop("k")
    out["values"] = out.pop("v")
    out["tokens"] = tokens
    out["labels"] = [""] + list(name)
    return out


def sample_names(weights, uchars, n=NUM_SAMPLES, temperature=TEMPERATURE, seed=SEED):
    """Generate ``n`` names. ``seed`` is an int or a ``random.Random`` to draw from."""
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    bos = len(uchars)
    vocab = range(bos + 1)
    block = len(weights["wpe"])
    inv_t = temperature ** -1        # the Value model divides by temperature this way
    n_layer = _n_layer(weights)
    names = []
    for _ in range(n):
        key_cache = [[] for _ in range(n_layer)]
        value_cache = [[] for _ in range(n_layer)]
        token, letters = bos, []
        for pos in range(block):
            logits = _float_step(weights, token, pos, key_cache, value_cache)
            probs = _softmax([l * inv_t for l in logits])
            token = rng.choices(vocab, weights=probs)[0]
            if token == bos:
                break
            letters.append(uchars[token])
        names.append("".join(letters))
    return names


def multi_head_line_range(path=None):
    """1-based (first, last) line numbers between the multi-head marker comments."""
    with open(path or __file__, encoding="utf-8") as fh:
        lines = [line.strip() for line in fh]
    begin = lines.index(MHA_BEGIN) + 1      # 0-based index of the marker = its 1-based number - 1
    end = lines.index(MHA_END) + 1
    return begin + 1, end - 1


# ---------------------------------------------------------------------------
# 8. Export and command line.
# ---------------------------------------------------------------------------
def build_export(names_path, steps=NUM_STEPS, progress=False):
    """Train on the file at ``names_path`` and return the JSON document as a dict."""
    names = read_names(names_path)
    result = train(names, steps=steps, seed=SEED, progress=progress)
    samples = sample_names(result["weights"], result["uchars"], NUM_SAMPLES, TEMPERATURE,
                           result["rng"])
    return {
        "format": FORMAT,
        "config": {
            "n_layer": N_LAYER, "n_embd": N_EMBD, "block_size": BLOCK_SIZE,
            "n_head": N_HEAD, "head_dim": HEAD_DIM, "steps": steps,
            "learning_rate": LEARNING_RATE, "beta1": BETA1, "beta2": BETA2, "eps": EPS,
            "seed": SEED, "temperature": TEMPERATURE,
        },
        "uchars": result["uchars"],
        "bos": result["bos"],
        "vocab_size": result["bos"] + 1,
        "weights": result["weights"],
        "losses": result["losses"],
        "samples": samples,
        "source": {
            "file": os.path.basename(names_path),
            "sha256": file_sha256(names_path),
            "count": len(names),
            "credit": CREDIT,
        },
    }


def write_json_atomic(path, obj):
    """Write ``obj`` as JSON next to ``path`` first, then rename it into place."""
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)          # mkstemp creates it private; the site must read it
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m export.microgpt",
        description="Train the pure-Python microgpt on a list of names and export it as JSON.")
    parser.add_argument("--names", default=os.environ.get("NAMES_PATH", DEFAULT_NAMES),
                        help="one name per line, UTF-8 (default: $NAMES_PATH or %(default)s)")
    parser.add_argument("--out", default=DEFAULT_OUT, help="JSON to write (default: %(default)s)")
    parser.add_argument("--steps", type=_positive_int, default=NUM_STEPS,
                        help="training steps (default: %(default)s)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    try:
        doc = build_export(args.names, steps=args.steps, progress=not args.no_progress)
    except NamesFileError as exc:
        print(f"microgpt: error: {exc}", file=sys.stderr)
        return 2
    write_json_atomic(args.out, doc)
    print(f"microgpt: wrote {args.out} (final loss {doc['losses'][-1]:.4f}; "
          f"samples: {', '.join(doc['samples'][:5])}, ...)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
