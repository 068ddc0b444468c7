"""The three models of the comparison, by name."""
from __future__ import annotations

from torch import nn

from .mlp import MLPLM
from .multihead import MultiHeadAttentionLM

MODEL_NAMES = ("mlp", "one_head", "four_heads")
MODEL_LABELS = {"mlp": "MLP", "one_head": "One head", "four_heads": "Four heads"}


def build_model(name: str, C: int, T: int, d_model: int = 64, hidden: int = 256) -> nn.Module:
    if name == "mlp":
        return MLPLM(C, T, d_model=d_model, hidden=hidden)
    if name == "one_head":
        return MultiHeadAttentionLM(C, T, d_model=d_model, hidden=hidden, heads=1)
    if name == "four_heads":
        return MultiHeadAttentionLM(C, T, d_model=d_model, hidden=hidden, heads=4)
    raise ValueError(f"unknown model {name!r}; choose one of {', '.join(MODEL_NAMES)}")
