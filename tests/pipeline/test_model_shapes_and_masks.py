"""The three models: shapes, masking, the two attention paths, parameter counts."""

import pytest
import torch

from export.mlp import MLPLM
from export.models import count_parameters
from export.multihead import MultiHeadAttentionLM

C, T = 4000, 64


def padded_batch(seed=0, B=6):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(4, C, (B, T), generator=g)
    for b, pad in enumerate([0, 1, 17, 40, 62, 63][:B]):
        x[b, :pad] = 0  # left padding of different lengths, as in real windows
    return x


@pytest.mark.parametrize("heads", [1, 4])
def test_final_query_path_equals_full_path(heads):
    torch.manual_seed(heads)
    model = MultiHeadAttentionLM(C, T, heads=heads).eval()
    x = padded_batch()
    with torch.no_grad():
        fast, weights = model(x, return_attention=True)
        full = model.forward_full(x)
    assert (fast - full["logits"]).abs().max().item() <= 1e-5
    assert torch.allclose(weights, full["A"][:, :, -1], atol=1e-6)
    # One mask, written once for both paths: the final query hides exactly the full mask's last row.
    assert torch.equal(weights == 0, full["mask"][:, None, -1].expand_as(weights))


def test_attention_names_and_sizes():
    model = MultiHeadAttentionLM(C, T, d_model=64, hidden=256, heads=4)
    for name in ("token_embedding", "position_embedding", "W_Q", "W_K", "W_V", "W_O", "hidden_layer", "vocab_head"):
        assert hasattr(model, name)
    assert model.token_embedding.padding_idx == 0
    assert tuple(model.position_embedding.weight.shape) == (64, 64)
    assert model.head_dim == 16


def test_one_head_and_four_heads_have_equal_parameter_counts():
    assert count_parameters(MultiHeadAttentionLM(C, T, heads=1)) == count_parameters(
        MultiHeadAttentionLM(C, T, heads=4)
    )


def test_pad_sources_get_zero_weight_and_real_rows_sum_to_one():
    model = MultiHeadAttentionLM(C, T).eval()
    x = padded_batch()
    with torch.no_grad():
        A = model.forward_full(x)["A"]
        _, final = model(x, return_attention=True)
    assert torch.isfinite(A).all()  # PAD-only receiver rows stay defined
    real = x.ne(0)
    for b in range(x.shape[0]):
        assert final[b][:, ~real[b]].abs().sum().item() == 0
        assert torch.allclose(final[b].sum(-1), torch.ones(4))
        r = int(real[b].nonzero()[0])  # the first real receiver
        assert A[b, :, r, :r].abs().sum().item() == 0  # PAD sources hidden
        assert A[b, :, r, r + 1 :].abs().sum().item() == 0  # no future
        assert A[b, :, r, r].allclose(torch.ones(4))  # it can only read itself


def test_output_does_not_depend_on_future_or_hidden_pad_changes():
    """A slot reads no later slot, and a real slot reads nothing of a PAD slot.

    Each change is paired with a control that must change something, so the
    comparison cannot pass just because the input did not matter.
    """
    torch.manual_seed(5)
    model = MultiHeadAttentionLM(C, T).eval()
    x = padded_batch()
    pads = [0, 1, 17, 40, 62, 63]  # as padded_batch() pads its rows
    with torch.no_grad():
        base, base_final = model.forward_full(x)["updated"], model(x)
        later = x.clone()
        later[:, 50] = (later[:, 50] + 1 - 4) % (C - 4) + 4  # another real token at slot 50
        changed = model.forward_full(later)["updated"]
        model.token_embedding.weight[0] = torch.randn(model.d_model) * 5  # PAD rows now carry a vector
        pad_moved, pad_moved_final = model.forward_full(x)["updated"], model(x)
    assert torch.allclose(changed[:, :50], base[:, :50], atol=1e-6)  # slots before 50 see nothing of it
    assert (changed[:, 50:] - base[:, 50:]).abs().max() > 1e-3  # control: slot 50 and later do
    for b, p in enumerate(pads):
        assert torch.allclose(pad_moved[b, p:], base[b, p:], atol=1e-5), b  # the real slots
    assert (pad_moved[3, :40] - base[3, :40]).abs().max() > 1e-3  # control: the PAD slots changed
    assert torch.allclose(pad_moved_final, base_final, atol=1e-5)  # the final-query path ignores PAD too


def test_mlp_reads_the_concatenated_window():
    model = MLPLM(C, T)
    assert model.hidden_layer.in_features == T * 64 == 4096
    assert not hasattr(model, "position_embedding")
    out = model(padded_batch())
    assert out.shape == (6, C)
    assert count_parameters(model) == C * 64 + 4096 * 256 + 256 + 256 * C + C


@pytest.mark.parametrize("heads", [1, 4])
def test_default_head_mask_changes_nothing(heads):
    torch.manual_seed(heads)
    model = MultiHeadAttentionLM(C, T, heads=heads).eval()
    x = padded_batch()
    with torch.no_grad():
        plain, weights = model(x, return_attention=True)
        ones, weights_ones = model(x, return_attention=True, head_mask=torch.ones(heads))
        full = model.forward_full(x, head_mask=torch.ones(heads))
    assert torch.equal(plain, ones) and torch.equal(weights, weights_ones)  # bit for bit
    assert torch.equal(model.forward_full(x)["logits"], full["logits"])


def test_a_knocked_out_head_contributes_nothing_before_W_O():
    """Mask 0 for head h equals zeroing the W_O columns that read head h's slice; weights stay as they were."""
    torch.manual_seed(7)
    model = MultiHeadAttentionLM(C, T, heads=4).eval()
    x = padded_batch()
    for h in range(4):
        mask = torch.ones(4)
        mask[h] = 0
        cut = MultiHeadAttentionLM(C, T, heads=4).eval()
        cut.load_state_dict(model.state_dict())
        with torch.no_grad():
            cut.W_O.weight[:, h * 16 : (h + 1) * 16] = 0
            masked, weights = model(x, return_attention=True, head_mask=mask)
            expected, expected_weights = cut(x, return_attention=True)
            full = model.forward_full(x, head_mask=mask)
        assert (masked - expected).abs().max().item() <= 1e-5
        assert torch.equal(weights, expected_weights)
        assert (full["logits"] - masked).abs().max().item() <= 1e-5
        assert full["joined"][:, :, h * 16 : (h + 1) * 16].abs().sum().item() == 0


def test_a_head_mask_of_the_wrong_length_is_refused():
    model = MultiHeadAttentionLM(C, T, heads=4).eval()
    with pytest.raises(ValueError, match="one number per head"):
        model(padded_batch(), head_mask=torch.ones(3))
