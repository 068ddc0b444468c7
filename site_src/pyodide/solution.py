# Multi-head attention inside the trained microgpt.
# The worked solution: both blanks filled in.
import json
import math

# The page put the trained model in Python's (in-browser) file system.
model = json.load(open("microgpt-trained.json"))
W = model["weights"]                 # every weight matrix, by name
LETTERS = model["uchars"]            # token id -> letter
BOS = model["bos"]                   # token id of the start/end marker
N_EMBD = model["config"]["n_embd"]   # 16 numbers in every vector
N_HEAD = model["config"]["n_head"]   # 4 heads
HEAD_DIM = N_EMBD // N_HEAD          # each head owns 4 of the 16 numbers


def dot(a, b):
    total = 0.0
    for x, y in zip(a, b):   # zip stops at the end of the shorter list
        total += x * y
    return total


def matvec(m, v):
    """Row i of matrix m dotted with v gives number i of the result."""
    return [dot(row, v) for row in m]


def softmax(scores):
    biggest = max(scores)
    ups = [math.exp(s - biggest) for s in scores]
    norm = sum(ups)
    return [u / norm for u in ups]


def rmsnorm(v):
    mean_square = dot(v, v) / len(v)
    return [x / math.sqrt(mean_square + 1e-5) for x in v]


def multi_head(q, keys, values):
    """q: the query of the current position (16 numbers).
    keys, values: one 16-number vector for every position up to this one.
    Returns what the N_HEAD heads found, side by side: 16 numbers."""
    out = []
    for h in range(N_HEAD):
        # head h owns numbers start .. start + HEAD_DIM - 1
        start = h * HEAD_DIM
        q_h = q[start:start + HEAD_DIM]
        # BLANK 1: this head's slice of every key, and of every value.
        k_h = [k[start:start + HEAD_DIM] for k in keys]
        v_h = [v[start:start + HEAD_DIM] for v in values]
        scores = [dot(q_h, k) / math.sqrt(HEAD_DIM) for k in k_h]
        # one weight per position; they add up to 1
        w = softmax(scores)
        # BLANK 2: the blend, added to the end of out.
        blended = [sum(weight * v[j] for weight, v in zip(w, v_h)) for j in range(HEAD_DIM)]
        out.extend(blended)
    return out


# Try it: run "emma" up to the attention block and let the last
# letter look back.
name = "emma"
tokens = [BOS] + [LETTERS.index(c) for c in name]
keys, values = [], []
for pos, tok in enumerate(tokens):
    x = [a + b for a, b in zip(W["wte"][tok], W["wpe"][pos])]
    # microgpt normalises at the input and again in the block
    x = rmsnorm(rmsnorm(x))
    q = matvec(W["layer0.attn_wq"], x)
    keys.append(matvec(W["layer0.attn_wk"], x))
    values.append(matvec(W["layer0.attn_wv"], x))

# q now belongs to the last letter, "a"
out = multi_head(q, keys, values)
print("out has", len(out), "items; four heads of", HEAD_DIM,
      "should give", N_EMBD)
if any(isinstance(item, list) for item in out):
    print("out holds lists, not numbers: add each head's numbers",
          "one by one")
else:
    print("heads side by side:", [round(v, 3) for v in out])
    # attn_wo blends what the four heads found
    mixed = matvec(W["layer0.attn_wo"], out)
    print("after attn_wo:     ", [round(v, 3) for v in mixed])
