"""microgpt: a whole GPT in plain Python, trained on first names, then sampled.

Nothing but the standard library. Every number is a Python float inside a
small class, Value, that remembers how it was computed, so the gradients of
training come from the chain rule written out below. The algorithm is Andrej
Karpathy's microgpt (MIT), rewritten for this lesson: one transformer block,
vectors of 16 numbers, 4 attention heads of 4 numbers, RMSNorm, no biases, a
ReLU MLP, Adam. It sees one name per training step for 1,000 steps, then
invents 20 names. Run: python microgpt.py names.txt (one name per line).

The random draws (seed 42: shuffle the names, one Gaussian per weight, one
choice per sampled letter) and every sum's order are the original program's,
so the losses and the names it prints are the original's, to the last bit.
"""
import math
import random
import sys

N_LAYER = 1                 # transformer blocks
N_EMBD = 16                 # numbers in every vector
BLOCK_SIZE = 16             # positions it can see (the longest name has 15 letters)
N_HEAD = 4                  # attention heads, side by side
LEARNING_RATE, BETA1, BETA2, EPS = 0.01, 0.85, 0.99, 1e-8   # Adam
NUM_STEPS, SEED, TEMPERATURE, NUM_SAMPLES = 1000, 42, 0.5, 20


# Tokens: each distinct letter gets an id; one more id, BOS, marks where a
# name starts and where it ends.
def build_vocab(names):
    uchars = sorted(set("".join(names)))
    return uchars, len(uchars)          # the letters, and BOS = the id after them


def encode(name, char_to_id, bos):
    return [bos] + [char_to_id[ch] for ch in name] + [bos]


# Autograd: a number that remembers its inputs and, per input, a slope: how far
# the result moves when that input moves by one (the local derivative). Each
# operation works out its result and slopes, then records them in a new Value;
# backward() multiplies slopes along the way from the loss (the chain rule).
class Value:
    __slots__ = ("data", "grad", "_inputs", "_slopes")

    def __init__(self, data, inputs=(), slopes=()):
        self.data, self.grad = data, 0.0
        self._inputs, self._slopes = inputs, slopes

    @staticmethod
    def wrap(n): return n if isinstance(n, Value) else Value(n)   # plain numbers join the graph

    def __add__(self, other):
        other = Value.wrap(other)
        return Value(self.data + other.data, (self, other), (1.0, 1.0))

    def __mul__(self, other):
        other = Value.wrap(other)
        a, b = self.data, other.data
        return Value(a * b, (self, other), (b, a))   # d(ab)/da = b, d(ab)/db = a

    def __pow__(self, k):               # k is a plain number: -1, -0.5, 2
        result, slope = self.data ** k, k * self.data ** (k - 1)
        return Value(result, (self,), (slope,))

    def log(self):
        result, slope = math.log(self.data), 1 / self.data
        return Value(result, (self,), (slope,))

    def exp(self):
        result = math.exp(self.data)
        return Value(result, (self,), (result,))   # e^x is its own slope

    def relu(self):
        result, slope = (self.data, 1.0) if self.data > 0 else (0, 0.0)
        return Value(result, (self,), (slope,))

    def __neg__(self): return self * -1
    def __sub__(self, other): return self + (-other)
    def __truediv__(self, other): return self * other ** -1
    def __radd__(self, other): return self + other
    def __rmul__(self, other): return self * other
    def __rsub__(self, other): return other + (-self)
    def __rtruediv__(self, other): return other * self ** -1

    def backward(self):
        # Put every node after all of its inputs (depth first, with a stack
        # rather than recursion, which a long name would overflow) ...
        order, seen, stack = [], {self}, [(self, iter(self._inputs))]
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
        # ... then hand each gradient back to the inputs, from the loss down.
        self.grad = 1.0
        for node in reversed(order):
            for child, slope in zip(node._inputs, node._slopes):
                child.grad += slope * node.grad


# Parameters: named matrices of random numbers, drawn in this order.
def init_state(rng, vocab_size, std=0.08):
    def matrix(rows, cols):
        return [[Value(rng.gauss(0, std)) for _ in range(cols)] for _ in range(rows)]
    state = {"wte": matrix(vocab_size, N_EMBD),      # a vector per token
             "wpe": matrix(BLOCK_SIZE, N_EMBD),      # a vector per position
             "lm_head": matrix(vocab_size, N_EMBD)}  # vector -> a score per token
    for layer in range(N_LAYER):
        for name, rows, cols in (("attn_wq", N_EMBD, N_EMBD), ("attn_wk", N_EMBD, N_EMBD),
                                 ("attn_wv", N_EMBD, N_EMBD), ("attn_wo", N_EMBD, N_EMBD),
                                 ("mlp_fc1", 4 * N_EMBD, N_EMBD), ("mlp_fc2", N_EMBD, 4 * N_EMBD)):
            state[f"layer{layer}.{name}"] = matrix(rows, cols)
    return state


def dot(a, b):                          # a[0]*b[0] + a[1]*b[1] + ..., left to right
    return sum(p * q for p, q in zip(a, b))


def linear(x, w):
    """Matrix times vector: number i is row i of w dotted with x."""
    return [dot(row, x) for row in w]


def softmax(scores):
    top = max(s.data for s in scores)   # subtracting the largest keeps exp() small
    ups = [(s - top).exp() for s in scores]
    total = sum(ups)
    return [u / total for u in ups]


def rmsnorm(x):
    mean_square = sum(xi * xi for xi in x) / len(x)
    scale = (mean_square + 1e-5) ** -0.5
    return [xi * scale for xi in x]


def gpt_step(state, token, pos, key_cache, value_cache, n_head=N_HEAD):
    """Scores for the next token, given `token` at position `pos`.

    The caches hold the keys and values of the earlier positions; this step
    adds its own, so a letter can only look back, never ahead.
    """
    x = [t + p for t, p in zip(state["wte"][token], state["wpe"][pos])]
    x = rmsnorm(x)   # normalised again below; this one matters for the residual path
    for layer in range(N_LAYER):
        pre = f"layer{layer}."
        # Attention: this position asks (q); every position so far answers (keys, values).
        skip = x
        x = rmsnorm(x)
        q = linear(x, state[pre + "attn_wq"])
        key_cache[layer].append(linear(x, state[pre + "attn_wk"]))
        value_cache[layer].append(linear(x, state[pre + "attn_wv"]))
        keys, values = key_cache[layer], value_cache[layer]
        # --- multi-head attention begins ---
        head_dim = N_EMBD // n_head               # numbers per head: 4 (16 in the one-head twin)
        out = []
        for h in range(n_head):
            start = h * head_dim                  # head h owns numbers start .. start + 3
            q_h = q[start:start + head_dim]
            k_h = [k[start:start + head_dim] for k in keys]
            v_h = [v[start:start + head_dim] for v in values]
            scores = [dot(q_h, key) / head_dim ** 0.5 for key in k_h]   # how well each key fits, / 2
            w = softmax(scores)                   # one weight per position, adding up to 1
            blended = [sum(weight * v[j] for weight, v in zip(w, v_h)) for j in range(head_dim)]
            out.extend(blended)                   # 4 numbers more: 16 after the 4 heads
        x = linear(out, state[pre + "attn_wo"])   # one matrix mixes what the heads found
        # --- multi-head attention ends ---
        x = [a + b for a, b in zip(x, skip)]
        # MLP: widen to 64 numbers, keep the positive part, narrow back to 16.
        skip = x
        x = rmsnorm(x)
        x = [n.relu() for n in linear(x, state[pre + "mlp_fc1"])]
        x = linear(x, state[pre + "mlp_fc2"])
        x = [a + b for a, b in zip(x, skip)]
    return linear(x, state["lm_head"])


def sequence_loss(state, tokens, n_head=N_HEAD):
    """Average surprise (cross-entropy) at each next token of `tokens`."""
    n = min(BLOCK_SIZE, len(tokens) - 1)
    key_cache = [[] for _ in range(N_LAYER)]     # one list per layer, filled position by position
    value_cache = [[] for _ in range(N_LAYER)]
    losses = []
    for pos in range(n):
        probs = softmax(gpt_step(state, tokens[pos], pos, key_cache, value_cache, n_head))
        losses.append(-probs[tokens[pos + 1]].log())
    return (1 / n) * sum(losses)


def train(names, steps=NUM_STEPS, seed=SEED, on_step=None, n_head=N_HEAD):
    """Train on `names`; returns the state, the losses, the letters and the generator."""
    rng = random.Random(seed)            # the stream random.seed(seed) would give
    docs = list(names)
    rng.shuffle(docs)
    uchars, bos = build_vocab(docs)
    char_to_id = {ch: i for i, ch in enumerate(uchars)}
    state = init_state(rng, len(uchars) + 1)
    params = [p for mat in state.values() for row in mat for p in row]
    mean = [0.0] * len(params)           # Adam: running mean of each gradient ...
    mean_sq = [0.0] * len(params)        # ... and of its square
    losses = []
    for step in range(steps):
        loss = sequence_loss(state, encode(docs[step % len(docs)], char_to_id, bos), n_head)
        loss.backward()
        lr = LEARNING_RATE * (1 - step / steps)   # falls linearly to 0
        for i, p in enumerate(params):
            mean[i] = BETA1 * mean[i] + (1 - BETA1) * p.grad
            mean_sq[i] = BETA2 * mean_sq[i] + (1 - BETA2) * p.grad ** 2
            m_hat = mean[i] / (1 - BETA1 ** (step + 1))     # undo the pull towards 0
            v_hat = mean_sq[i] / (1 - BETA2 ** (step + 1))  # of the first steps
            p.data -= lr * m_hat / (v_hat ** 0.5 + EPS)
            p.grad = 0.0
        losses.append(loss.data)
        if on_step:
            on_step(step + 1, loss.data)
    return {"state": state, "losses": losses, "uchars": uchars, "bos": bos, "rng": rng}


def sample(state, uchars, rng, n=NUM_SAMPLES, temperature=TEMPERATURE, n_head=N_HEAD):
    """Invent n names: draw a letter from the scores, feed it back, until BOS."""
    bos = len(uchars)
    names = []
    for _ in range(n):
        key_cache = [[] for _ in range(N_LAYER)]
        value_cache = [[] for _ in range(N_LAYER)]
        token, letters = bos, []
        for pos in range(BLOCK_SIZE):
            logits = gpt_step(state, token, pos, key_cache, value_cache, n_head)
            probs = softmax([l / temperature for l in logits])   # below 1: bolder favourites
            token = rng.choices(range(bos + 1), weights=[p.data for p in probs])[0]
            if token == bos:
                break
            letters.append(uchars[token])
        names.append("".join(letters))
    return names


if __name__ == "__main__":
    with open(sys.argv[1] if len(sys.argv) > 1 else "names.txt", encoding="utf-8") as fh:
        names = [line.strip() for line in fh if line.strip()]
    run = train(names, on_step=lambda step, loss: print(f"step {step:4d} | loss {loss:.4f}", end="\r"))
    print()
    for i, name in enumerate(sample(run["state"], run["uchars"], run["rng"]), 1):
        print(f"sample {i:2d}: {name}")
