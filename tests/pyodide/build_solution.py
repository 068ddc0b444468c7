import math

# E: one row of 64 numbers per token of your prompt, BOS first (token row + position row).
# Every weight matrix is stored as PyTorch's nn.Linear stores it, [out, in]:
#   output o = sum over i of W[o][i] * x[i], plus the bias b[o]


def project(E, W, b):
    """Each row x of E times W ([out, in]) plus the bias b: one output row per row of E."""
    rows = []
    for x in E:
        rows.append([sum(w * xi for w, xi in zip(W_o, x)) + b_o for W_o, b_o in zip(W, b)])
    return rows


def split_heads(X, n_heads):
    """One list of rows per head: head h keeps coordinates h*d ... h*d + d - 1 of every row (d = 64 // n_heads)."""
    d = len(X[0]) // n_heads
    return [[x[h * d:(h + 1) * d] for x in X] for h in range(n_heads)]


def scores(q_h, k_h):
    """S[i][j]: receiver i's query row dotted with source j's key row, divided by the root of the head size."""
    d = len(q_h[0])
    return [[sum(a * b for a, b in zip(q, k)) / math.sqrt(d) for k in k_h] for q in q_h]


def causal_softmax(S):
    """Each row of S to weights that add up to 1; receiver i sees sources 0 ... i, the later ones get 0."""
    A = []
    for i, row in enumerate(S):
        top = max(row[:i + 1])
        e = [math.exp(s - top) if j <= i else 0.0 for j, s in enumerate(row)]
        total = sum(e)
        A.append([x / total for x in e])
    return A


def blend(A, v_h):
    """Receiver i's message: the value rows weighted by A[i]."""
    d = len(v_h[0])
    return [[sum(a * v[c] for a, v in zip(weights, v_h)) for c in range(d)] for weights in A]


def multi_head_attention(E, weights, n_heads):
    """The update rows: every head's messages, joined coordinate by coordinate, then W_O and b_O."""
    Q = split_heads(project(E, weights["W_Q"], weights["b_Q"]), n_heads)
    K = split_heads(project(E, weights["W_K"], weights["b_K"]), n_heads)
    V = split_heads(project(E, weights["W_V"], weights["b_V"]), n_heads)
    messages = [blend(causal_softmax(scores(Q[h], K[h])), V[h]) for h in range(n_heads)]
    joined = []
    for t in range(len(E)):
        row = []
        for h in range(n_heads):
            row.extend(messages[h][t])
        joined.append(row)
    return project(joined, weights["W_O"], weights["b_O"])
