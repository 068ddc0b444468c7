"""The MLP baseline: no attention, no position table.

The T token rows are concatenated in slot order (T x d inputs), so the first
layer's weights already tell the slots apart. Then ReLU(hidden_layer) and
``vocab_head`` give C next-token logits, as in the attention models.
"""

from __future__ import annotations

import torch
from torch import nn

from .defaults import D_MODEL, HIDDEN
from .wordlm import PAD_ID


class MLPLM(nn.Module):
    def __init__(self, C: int, T: int, d_model: int = D_MODEL, hidden: int = HIDDEN):
        super().__init__()
        self.C, self.T, self.d_model, self.hidden = C, T, d_model, hidden
        self.token_embedding = nn.Embedding(C, d_model, padding_idx=PAD_ID)
        self.hidden_layer = nn.Linear(T * d_model, hidden)
        self.vocab_head = nn.Linear(hidden, C)

    def config(self) -> dict:
        return {
            "kind": "mlp",
            "C": self.C,
            "T": self.T,
            "d_model": self.d_model,
            "hidden": self.hidden,
        }

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = self.token_embedding(x).reshape(x.shape[0], self.T * self.d_model)
        return self.vocab_head(torch.relu(self.hidden_layer(rows)))
