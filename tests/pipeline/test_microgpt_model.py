"""Tests for export/microgpt/, the pure-Python microgpt (one-page model, float twin, CLI).

The pinned numbers (loss at step 1,000 and the 20 samples) were produced by
running the original microgpt program, as printed in the course text, on
makemore's names.txt, and by export.microgpt on the same file: both gave these
exact floats and names.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tolerance import FLOAT64_REL

from export import microgpt as mg

ROOT = Path(__file__).resolve().parents[2]
TRAINED = ROOT / "wasm_assets" / "microgpt-trained.json"

# From the original program (and ours), 1,000 steps on names.txt.
REF_LOSS_STEP_1 = 3.3659669475848504
REF_LOSS_STEP_1000 = 2.6496944697407585
REF_SAMPLES = [
    "kamon",
    "ann",
    "karai",
    "jaire",
    "vialan",
    "karia",
    "yeran",
    "anna",
    "areli",
    "kaina",
    "konna",
    "keylen",
    "liole",
    "alerin",
    "earan",
    "lenne",
    "kana",
    "lara",
    "alela",
    "anton",
]

TINY_NAMES = [
    "emma",
    "olivia",
    "ava",
    "isabella",
    "sophia",
    "mia",
    "amelia",
    "harper",
    "evelyn",
    "abigail",
    "emily",
    "ella",
    "liam",
    "noah",
    "oliver",
    "elijah",
    "james",
    "lucas",
    "mason",
    "ethan",
]


# ---------------------------------------------------------------------------
# Autograd
# ---------------------------------------------------------------------------
def _expr(a, b, c):
    """A small expression touching every operation of the Value class."""
    t = a * b + c.exp() - a / (b + 3.0)
    u = (t * t + 1.0) ** -0.5 + (c * 2.0).relu() - 1.0 / (a + 4.0)
    return (u + 2.0).log() * 3.0 + (1.0 - b) * c


def test_value_gradient_matches_finite_differences_on_small_expression():
    point = [0.7, -1.3, 0.4]
    xs = [mg.Value(v) for v in point]
    out = _expr(*xs)
    out.backward()
    h = 1e-6
    for i in range(3):
        up = list(point)
        down = list(point)
        up[i] += h
        down[i] -= h
        f_up = _expr(*[mg.Value(v) for v in up]).data
        f_down = _expr(*[mg.Value(v) for v in down]).data
        numeric = (f_up - f_down) / (2 * h)
        assert xs[i].grad == pytest.approx(numeric, rel=1e-6, abs=1e-8)


def test_value_gradient_matches_finite_differences_on_model_forward():
    names = ["abca", "cab", "bb"]
    uchars, bos = mg.build_vocab(names)
    ids = {ch: i for i, ch in enumerate(uchars)}
    state = mg.init_state(random.Random(7), bos + 1)
    tokens = mg.encode("abca", ids, bos)
    loss = mg.sequence_loss(state, tokens)
    loss.backward()

    pick = random.Random(1)
    h = 1e-6
    checked = 0
    for name, mat in state.items():
        for _ in range(2):
            r = pick.randrange(len(mat))
            c = pick.randrange(len(mat[r]))
            p = mat[r][c]
            orig = p.data
            p.data = orig + h
            f_up = mg.sequence_loss(state, tokens).data
            p.data = orig - h
            f_down = mg.sequence_loss(state, tokens).data
            p.data = orig
            numeric = (f_up - f_down) / (2 * h)
            assert p.grad == pytest.approx(numeric, rel=1e-4, abs=1e-7), (name, r, c)
            checked += 1
    assert checked == 18
    # Rows of wpe beyond the sequence and the unused tokens get no gradient.
    assert all(p.grad == 0.0 for p in state["wpe"][len(tokens)])


def test_backward_survives_a_deep_graph():
    x = mg.Value(1.0)
    y = x
    for _ in range(5000):  # far deeper than Python's default recursion limit
        y = y * 1.0 + 0.0
    y.backward()
    assert x.grad == 1.0


# ---------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------
@pytest.mark.slow
def test_loss_falls_over_50_steps_on_tiny_list():
    result = mg.train(TINY_NAMES, steps=50, seed=42)
    losses = result["losses"]
    assert len(losses) == 50
    assert all(math.isfinite(v) for v in losses)
    first, last = sum(losses[:10]) / 10, sum(losses[-10:]) / 10
    assert last < first - 0.3, (first, last)
    # Every shape in the state dict.
    w = result["state"]
    v = len(result["uchars"]) + 1
    shapes = {k: (len(m), len(m[0])) for k, m in w.items()}
    assert shapes == {
        "wte": (v, 16),
        "wpe": (16, 16),
        "lm_head": (v, 16),
        "layer0.attn_wq": (16, 16),
        "layer0.attn_wk": (16, 16),
        "layer0.attn_wv": (16, 16),
        "layer0.attn_wo": (16, 16),
        "layer0.mlp_fc1": (64, 16),
        "layer0.mlp_fc2": (16, 64),
    }


def test_train_leaves_global_random_state_alone():
    random.seed(123)
    before = random.getstate()
    mg.train(["ab", "ba"], steps=1)
    assert random.getstate() == before


# ---------------------------------------------------------------------------
# The trained model in wasm_assets
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def trained():
    return mg.load_trained(TRAINED)


def test_trained_json_schema(trained):
    assert list(trained) == [
        "format",
        "config",
        "uchars",
        "bos",
        "vocab_size",
        "weights",
        "losses",
        "samples",
        "source",
    ]
    assert trained["config"] == {
        "n_layer": 1,
        "n_embd": 16,
        "block_size": 16,
        "n_head": 4,
        "head_dim": 4,
        "steps": 1000,
        "learning_rate": 0.01,
        "beta1": 0.85,
        "beta2": 0.99,
        "eps": 1e-8,
        "seed": 42,
        "temperature": 0.5,
    }
    assert trained["uchars"] == list("abcdefghijklmnopqrstuvwxyz")
    assert trained["bos"] == 26 and trained["vocab_size"] == 27
    assert list(trained["weights"]) == [
        "wte",
        "wpe",
        "lm_head",
        "layer0.attn_wq",
        "layer0.attn_wk",
        "layer0.attn_wv",
        "layer0.attn_wo",
        "layer0.mlp_fc1",
        "layer0.mlp_fc2",
    ]
    assert len(trained["losses"]) == 1000
    assert len(trained["samples"]) == 20
    src = trained["source"]
    assert src["file"] == "names.txt"
    assert src["count"] == 32033
    assert len(src["sha256"]) == 64
    assert src["credit"] == "makemore names.txt, Andrej Karpathy, MIT"


def test_trained_json_is_written_canonically(trained, tmp_path):
    # Re-serialising the loaded document reproduces the committed bytes.
    copy = tmp_path / "copy.json"
    mg.write_json_atomic(copy, trained)
    assert copy.read_bytes() == TRAINED.read_bytes()


def test_pinned_reference_numbers(trained):
    assert trained["losses"][-1] == REF_LOSS_STEP_1000
    assert trained["losses"][0] == REF_LOSS_STEP_1
    assert trained["samples"] == REF_SAMPLES


def test_samples_reproduce_from_weights_alone(trained):
    # Replay the generator: one shuffle of `count` names, one Gaussian per
    # weight, then the sampling draws.
    rng = random.Random(trained["config"]["seed"])
    rng.shuffle(list(range(trained["source"]["count"])))
    n_params = sum(len(row) for m in trained["weights"].values() for row in m)
    for _ in range(n_params):
        rng.gauss(0, 0.08)
    names = mg.sample_names(trained["weights"], trained["uchars"], 20, 0.5, rng)
    assert names == trained["samples"]


def _value_logits(weights, tokens):
    state = {k: [[mg.Value(x) for x in row] for row in m] for k, m in weights.items()}
    kc, vc = [[]], [[]]
    return [[l.data for l in mg.gpt_step(state, t, pos, kc, vc)] for pos, t in enumerate(tokens)]


def test_forward_attention_for_emma(trained):
    w, uchars = trained["weights"], trained["uchars"]
    out = mg.forward_attention(w, uchars, "emma")
    assert out["tokens"] == [26, 4, 12, 12, 0]
    assert out["labels"] == ["", "e", "m", "m", "a"]
    # The float path and the autograd model do the same float64 operations; math.exp
    # comes from the C library, whose last bit may differ between processors.
    logits = _value_logits(w, out["tokens"])
    for pos in range(5):
        probs = mg._softmax(logits[pos])
        assert out["probs"][pos] == pytest.approx(probs, rel=FLOAT64_REL, abs=1e-15)
        assert len(out["q"][pos]) == len(out["keys"][pos]) == len(out["values"][pos]) == 16
        assert len(out["head_weights"][pos]) == 4
        for head in out["head_weights"][pos]:
            assert len(head) == pos + 1  # causal: positions 0..pos
            assert sum(head) == pytest.approx(1.0)
        assert len(out["single_head_weights"][pos]) == pos + 1
        assert sum(out["single_head_weights"][pos]) == pytest.approx(1.0)
    # Input to the block is rmsnorm(rmsnorm(tok + pos)).
    x0 = mg._rmsnorm(mg._rmsnorm([a + b for a, b in zip(w["wte"][26], w["wpe"][0])]))
    assert out["x"][0] == pytest.approx(x0, rel=FLOAT64_REL)
    assert out["q"][0] == pytest.approx(mg._linear(x0, w["layer0.attn_wq"]), rel=FLOAT64_REL, abs=1e-15)
    # Position 0 can only look at itself.
    assert out["head_weights"][0] == [[1.0]] * 4
    # The multi-head result, re-derived by hand from q, keys and values.
    q, keys, values = out["q"][4], out["keys"], out["values"]
    glued = []
    for h in range(4):
        s = h * 4
        scores = [sum(a * b for a, b in zip(q[s : s + 4], k[s : s + 4])) / 2 for k in keys]
        m = max(scores)
        e = [math.exp(v - m) for v in scores]
        att = [v / sum(e) for v in e]
        assert att == pytest.approx(out["head_weights"][4][h], rel=1e-12)
        glued.extend(sum(att[t] * values[t][s + d] for t in range(5)) for d in range(4))
    assert glued == pytest.approx(out["heads_out"][4], rel=1e-10, abs=1e-14)
    # Pinned numbers from the committed model, computed on another machine.
    assert out["probs"][4][26] == pytest.approx(PINNED_EMMA_END, rel=FLOAT64_REL)
    assert out["head_weights"][4][0] == pytest.approx(PINNED_EMMA_HEAD0_LAST, rel=FLOAT64_REL)


PINNED_EMMA_END = 0.16562044919390204  # P(name ends) after "emma"
PINNED_EMMA_HEAD0_LAST = [
    0.22249323988029157,
    0.2628420555785366,
    0.1836003712484129,
    0.16292378755415785,
    0.1681405457386011,
]


def test_forward_attention_rejects_bad_names(trained):
    with pytest.raises(ValueError, match="vocabulary"):
        mg.forward_attention(trained["weights"], trained["uchars"], "Emma")
    with pytest.raises(ValueError, match="too long"):
        mg.forward_attention(trained["weights"], trained["uchars"], "a" * 16)
    mg.forward_attention(trained["weights"], trained["uchars"], "a" * 15)


def test_multi_head_line_range():
    first, last = mg.multi_head_line_range()
    lines = mg.SOURCE.read_text(encoding="utf-8").splitlines()
    assert lines[first - 2].strip() == mg.MHA_BEGIN
    assert lines[last].strip() == mg.MHA_END
    block = "\n".join(lines[first - 1 : last])
    assert "for h in range(n_head)" in block
    assert "attn_wo" in block and ".extend(" in block
    assert 8 <= last - first + 1 <= 20
    # It sits inside gpt_step.
    start = next(i for i, l in enumerate(lines) if l.startswith("def gpt_step("))
    end = next(i for i, l in enumerate(lines) if l.startswith("def sequence_loss("))
    assert start < first - 1 < last - 1 < end


def test_one_page_file_reads_whole_and_speaks_the_exercise():
    """The file the page shows: at most 250 lines, standard library only, the exercise's names."""
    text = mg.SOURCE.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= 250, len(lines)
    imports = {m for l in lines for m in re.findall(r"^(?:import|from) (\w+)", l)}
    assert imports <= {"math", "random", "sys"}, imports
    first, last = mg.multi_head_line_range()
    block = "\n".join(lines[first - 1 : last])
    for name in (
        "start = h * head_dim",
        "q_h = q[start:start + head_dim]",
        "k_h = [k[start:start + head_dim] for k in keys]",
        "v_h = [v[start:start + head_dim] for v in values]",
        "out.extend(blended)",
    ):
        assert name in block, name
    for old in ("lo =", "k_parts", "heads_out", "q_part"):
        assert old not in text, old


def test_value_sampling_equals_float_sampling(trained):
    """microgpt.sample (autograd Values) and floats.sample_names draw the same names."""
    state = {k: [[mg.Value(x) for x in row] for row in m] for k, m in trained["weights"].items()}
    for seed, temperature in ((42, 0.5), (3, 1.2)):
        by_value = mg.sample(state, trained["uchars"], random.Random(seed), n=4, temperature=temperature)
        by_float = mg.sample_names(trained["weights"], trained["uchars"], 4, temperature, seed)
        assert by_value == by_float


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------
def _cli(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "export.microgpt", *args], cwd=ROOT, capture_output=True, text=True, timeout=60, env=env
    )


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "not found"),
        (b"", "no names"),
        (b"\n  \n\n", "no names"),
        (b"emma\n\xff\xfeolivia\n", "not valid UTF-8"),
    ],
)
def test_cli_rejects_bad_names_file(tmp_path, content, message):
    path = tmp_path / "names.txt"
    if content is not None:
        path.write_bytes(content)
    out = tmp_path / "out.json"
    proc = _cli("--names", str(path), "--out", str(out), "--steps", "2", "--no-progress")
    assert proc.returncode == 2
    err = proc.stderr.strip()
    assert len(err.splitlines()) == 1 and message in err and "Traceback" not in err
    assert not out.exists()


def test_cli_reads_names_path_from_environment(tmp_path):
    env = dict(os.environ, NAMES_PATH=str(tmp_path / "absent.txt"))
    proc = _cli("--out", str(tmp_path / "o.json"), env=env)
    assert proc.returncode == 2 and "absent.txt" in proc.stderr


def test_read_names_raises_clear_error(tmp_path):
    with pytest.raises(mg.NamesFileError, match="not found"):
        mg.read_names(tmp_path / "nope.txt")
    (tmp_path / "a.txt").write_bytes(b" emma \r\nava\r\n\r\n")
    assert mg.read_names(tmp_path / "a.txt") == ["emma", "ava"]


def test_cli_is_deterministic(tmp_path):
    names = tmp_path / "names.txt"
    names.write_text("\n".join(TINY_NAMES) + "\n", encoding="utf-8")
    outs = []
    for i in range(2):
        out = tmp_path / f"run{i}" / "m.json"
        assert mg.main(["--names", str(names), "--out", str(out), "--steps", "5", "--no-progress"]) == 0
        outs.append(out.read_bytes())
        assert os.listdir(out.parent) == ["m.json"]  # no temp file left behind
        assert out.stat().st_mode & 0o777 == 0o644
    assert outs[0] == outs[1]
    doc = json.loads(outs[0])
    assert doc["config"]["steps"] == 5 and len(doc["losses"]) == 5
    assert doc["source"]["count"] == 20 and doc["source"]["file"] == "names.txt"
    assert len(doc["samples"]) == 20
