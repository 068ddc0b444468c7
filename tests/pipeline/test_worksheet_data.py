"""The two-head worksheet (lesson page 2): arithmetic, JSON, and agreement with the model class."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from export.lesson import worksheet
from tests.tolerance import FLOAT64_REL, assert_close_tree
from export.multihead import MultiHeadAttentionLM
from export.wordlm import PAD_ID

JSON_PATH = worksheet.DEFAULT_OUT


@pytest.fixture(scope="module")
def ws():
    return worksheet.compute()


def test_shapes(ws):
    T, D, h, dh = 10, worksheet.D_MODEL, worksheet.HEADS, worksheet.HEAD_DIM
    assert (D, h, dh) == (4, 2, 2)
    assert ws["tokens"] == ["the", "fisherman", "sat", "beside", "the", "river", "bank", "and", "watched", "the"]
    assert ws["E"].shape == (T, D)
    for name in ("Q", "K", "V", "H"):
        assert ws[name].shape == (h, T, dh), name
    assert ws["scores"].shape == ws["A"].shape == (h, T, T)
    for name in ("concat", "update", "output"):
        assert ws[name].shape == (T, D), name
    for name in ("W_Q", "W_K", "W_V", "W_O"):
        assert ws[name].shape == (D, D), name


def test_inputs_have_one_decimal(ws):
    for name in ("token_table", "position_table", "W_Q", "W_K", "W_V", "W_O"):
        a = ws[name]
        assert np.allclose(a * 10, np.round(a * 10)), name


def test_embedding_is_token_plus_position_and_repeated_words_share_a_row(ws):
    index = {w: i for i, w in enumerate(ws["vocab"])}
    for t, tok in enumerate(ws["tokens"]):
        assert np.allclose(ws["E"][t], ws["token_table"][index[tok]] + ws["position_table"][t])
    the = [t for t, tok in enumerate(ws["tokens"]) if tok == "the"]
    assert the == [0, 4, 9]
    assert np.allclose(ws["token_rows"][0], ws["token_rows"][4]) and np.allclose(
        ws["token_rows"][4], ws["token_rows"][9]
    )


def test_projections_split_into_heads(ws):
    E = ws["E"]
    for name, W in (("Q", ws["W_Q"]), ("K", ws["W_K"]), ("V", ws["W_V"])):
        full = E @ W
        for head in range(2):
            assert np.allclose(ws[name][head], full[:, 2 * head : 2 * head + 2]), (name, head)


def test_scores_are_scaled_dot_products(ws):
    for head in range(2):
        Q, K = ws["Q"][head], ws["K"][head]
        for i in range(10):
            for j in range(10):
                assert math.isclose(ws["scores"][head, i, j], float(Q[i] @ K[j]) / math.sqrt(2), abs_tol=1e-12)


def test_causal_mask_and_softmax_rows(ws):
    A = ws["A"]
    allowed = ws["allowed"]
    assert allowed.sum() == 55 and np.array_equal(allowed, np.tril(np.ones((10, 10), dtype=bool)))
    assert np.all(A[:, ~allowed] == 0.0), "a receiver read a later token"
    assert np.allclose(A.sum(axis=-1), 1.0)
    assert np.all(A[:, allowed] > 0)
    assert np.allclose(A[:, 0, 0], 1.0)  # the first token can only read itself
    for head in range(2):  # the allowed weights are the softmax of the allowed scores
        for i in range(10):
            s = ws["scores"][head, i, : i + 1]
            e = np.exp(s - s.max())
            assert np.allclose(A[head, i, : i + 1], e / e.sum())


def test_messages_concat_projection_and_residual(ws):
    for head in range(2):
        assert np.allclose(ws["H"][head], ws["A"][head] @ ws["V"][head])
    assert np.allclose(ws["concat"], np.concatenate([ws["H"][0], ws["H"][1]], axis=1))
    assert np.allclose(ws["update"], ws["concat"] @ ws["W_O"])
    assert np.allclose(ws["output"], ws["E"] + ws["update"])


def test_seed_is_the_documented_selection(ws):
    assert worksheet.find_seed() == worksheet.SEED == ws["seed"]
    final = ws["A"][:, -1]
    assert ws["tokens"][int(np.argmax(final[0]))] == "river"
    assert ws["tokens"][int(np.argmax(final[1]))] == "fisherman"
    assert final.max() < 0.9, "the weights should stay a visible mix"


def test_deterministic():
    a, b = worksheet.to_json(worksheet.compute()), worksheet.to_json(worksheet.compute())
    assert a == b


def test_matches_the_model_class(ws):
    """Same numbers through MultiHeadAttentionLM.forward_full (zero biases) give the same stages."""
    vocab = ws["vocab"]
    model = MultiHeadAttentionLM(C=len(vocab) + 1, T=10, d_model=4, hidden=3, heads=2).double()
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        for i, _ in enumerate(vocab):
            model.token_embedding.weight[i + 1] = torch.from_numpy(ws["token_table"][i])
        model.position_embedding.weight[:] = torch.from_numpy(ws["position_table"])
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            getattr(model, name).weight[:] = torch.from_numpy(ws[name].T.copy())  # Linear computes x W^T
        ids = [vocab.index(t) + 1 for t in ws["tokens"]]
        assert PAD_ID not in ids
        out = model.forward_full(torch.tensor([ids]))
    assert np.allclose(out["E"][0].numpy(), ws["E"])
    assert np.allclose(out["A"][0].numpy(), ws["A"])
    assert np.allclose(out["messages"][0].numpy(), ws["H"])
    assert np.allclose(out["joined"][0].numpy(), ws["concat"])
    assert np.allclose(out["updated"][0].numpy(), ws["output"])


def test_json_on_disk_matches_a_fresh_computation():
    assert JSON_PATH.is_file(), "wasm_assets/worksheet.json is missing: run `python -m export.lesson.worksheet`"
    on_disk = json.loads(JSON_PATH.read_text())
    # numpy may pick other SIMD kernels on another processor: float64 within FLOAT64_REL, the rest exact.
    assert_close_tree(
        json.loads(json.dumps(worksheet.to_json(worksheet.compute()))), on_disk, rel=FLOAT64_REL, abs_=1e-12
    )
    assert on_disk["schema"] == worksheet.SCHEMA
    masked = [on_disk["scores"][h][i][j] is None for h in range(2) for i in range(10) for j in range(10)]
    assert sum(masked) == 2 * 45
    assert on_disk["mask"][9] == [1] * 10 and on_disk["mask"][0] == [1] + [0] * 9


def test_write_is_atomic_and_runnable(tmp_path):
    out = tmp_path / "sub" / "worksheet.json"
    assert worksheet.main(["--out", str(out)]) == 0
    assert json.loads(out.read_text()) == json.loads(json.dumps(worksheet.to_json(worksheet.compute())))
    assert [p.name for p in out.parent.iterdir()] == ["worksheet.json"]  # no temporary left behind
