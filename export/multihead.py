"""The one-block attention language model (one head or four heads).

E = token rows + learned position rows. Each head projects E to its own
queries, keys and values, scores the sources a receiver may see, and sends
back a weighted sum of value rows. The heads' messages are joined, mixed by
``W_O`` and added to E (the residual). The final slot's updated row goes
through ReLU(``hidden_layer``) and ``vocab_head`` to C next-token logits.

Masking: a receiver sees itself and earlier slots (causal), and a real
(non-PAD) receiver never reads a PAD source. A PAD receiver may read earlier
PADs, which keeps its softmax defined; it never reaches the loss.

Head mask: both forward paths take an optional ``head_mask`` (one number
per head, default all ones). Each head's message is multiplied by its number
before the heads are joined, so a head with 0 contributes nothing to what
``W_O`` mixes; its attention weights are still computed and returned. With
the default the multiplication is by exactly 1.0 and every output is
unchanged, bit for bit.

Two forward paths give the same final logits:

* ``forward_full`` computes every receiver (the teaching view, T x T weights);
* ``forward`` computes only the final slot's query (B x heads x 1 x T
  weights), which is all next-token prediction needs. Training and the
  exported browser models use it.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .defaults import D_MODEL, HIDDEN
from .wordlm import PAD_ID


# lesson: class
class MultiHeadAttentionLM(nn.Module):
    def __init__(
        self,
        C: int,
        T: int,
        d_model: int = D_MODEL,
        hidden: int = HIDDEN,
        heads: int = 4,
    ):
        super().__init__()
        if d_model % heads:
            msg = f"d_model={d_model} is not divisible by heads={heads}"
            raise ValueError(msg)
        self.C, self.T, self.d_model = C, T, d_model
        self.hidden, self.heads = hidden, heads
        self.head_dim = d_model // heads
        self.token_embedding = nn.Embedding(C, d_model, padding_idx=PAD_ID)
        # learned, not sinusoidal
        self.position_embedding = nn.Embedding(T, d_model)
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)
        self.hidden_layer = nn.Linear(d_model, hidden)
        self.vocab_head = nn.Linear(hidden, C)

    # lesson: config
    def config(self) -> dict:
        return {
            "kind": "attention",
            "C": self.C,
            "T": self.T,
            "d_model": self.d_model,
            "hidden": self.hidden,
            "heads": self.heads,
        }

    # lesson: embed
    def embed(self, x: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(x.shape[1], device=x.device)
        return self.token_embedding(x) + self.position_embedding(positions)[None]

    # lesson: split-heads
    def _split_heads(self, rows: torch.Tensor) -> torch.Tensor:
        B, L, _ = rows.shape  # [B, L, d] -> [B, heads, L, head_dim]
        return rows.reshape(B, L, self.heads, self.head_dim).transpose(1, 2)

    # lesson: head-mask
    def _masked(
        self, messages: torch.Tensor, head_mask: torch.Tensor | None
    ) -> torch.Tensor:
        """Scale each head's messages [B, heads, L, head_dim] by its entry of ``head_mask`` [heads]."""
        if head_mask is None:
            return messages
        head_mask = torch.as_tensor(
            head_mask, dtype=messages.dtype, device=messages.device
        )
        if head_mask.shape != (self.heads,):
            raise ValueError(
                f"head_mask must hold one number per head ({self.heads}), got shape {tuple(head_mask.shape)}"
            )
        return messages * head_mask[None, :, None, None]

    # lesson: predict
    def _predict(self, final_row: torch.Tensor) -> torch.Tensor:
        return self.vocab_head(torch.relu(self.hidden_layer(final_row)))

    # lesson: forward
    def forward(
        self,
        x: torch.Tensor,
        return_attention: bool = False,
        head_mask: torch.Tensor | None = None,
    ):
        """Final-query path: logits [B, C] (and weights [B, heads, T]);
        ``head_mask`` [heads] (default ones)."""
        B, T = x.shape
        E = self.embed(x)
        q = self._split_heads(self.W_Q(E[:, -1:]))  # [B, h, 1, dh]
        K = self._split_heads(self.W_K(E))
        V = self._split_heads(self.W_V(E))
        scores = (q @ K.transpose(-2, -1)) / math.sqrt(self.head_dim)  # [B, h, 1, T]
        # forward_full's mask, its final receiver's row only
        # (no source is later than the final slot)
        later = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(diagonal=1)[
            -1:
        ]
        is_real = x != PAD_ID
        pad_source_for_real_receiver = is_real[:, -1:].unsqueeze(
            2
        ) & ~is_real.unsqueeze(1)
        # [B, receiver (the final one), source]
        mask = later.unsqueeze(0) | pad_source_for_real_receiver
        A = scores.masked_fill(mask.unsqueeze(1), -torch.inf).softmax(dim=-1)
        joined = self._masked(A @ V, head_mask).transpose(1, 2).reshape(B, self.d_model)
        updated = E[:, -1] + self.W_O(joined)
        logits = self._predict(updated)
        return (logits, A[:, :, 0]) if return_attention else logits

    # lesson: forward-full
    def forward_full(
        self, x: torch.Tensor, head_mask: torch.Tensor | None = None
    ) -> dict[str, torch.Tensor]:
        """Every receiver: the teaching view, with each intermediate tensor."""
        B, T = x.shape
        E = self.embed(x)  # [B, T, d]
        # lesson: full-heads
        # Q, K and V: each [B, h, T, dh]
        Q, K, V = (self._split_heads(W(E)) for W in (self.W_Q, self.W_K, self.W_V))
        # lesson: full-scores
        scores = (Q @ K.transpose(-2, -1)) / math.sqrt(self.head_dim)  # [B, h, T, T]
        # lesson: full-mask
        later = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(diagonal=1)
        is_real = x != PAD_ID
        pad_source_for_real_receiver = is_real.unsqueeze(2) & ~is_real.unsqueeze(1)
        # [B, receiver, source]
        mask = later.unsqueeze(0) | pad_source_for_real_receiver
        # lesson: full-softmax
        A = scores.masked_fill(mask.unsqueeze(1), -torch.inf).softmax(dim=-1)
        # lesson: full-messages
        # [B, h, T, dh]; a knocked-out head sends zeros
        messages = self._masked(A @ V, head_mask)
        # lesson: full-concat
        joined = messages.transpose(1, 2).reshape(B, T, self.d_model)  # [B, T, d]
        # lesson: full-wo
        update = self.W_O(joined)
        # lesson: full-residual
        updated = E + update
        # lesson: full-hidden
        # the final slot only: [B, hidden]
        hidden = torch.relu(self.hidden_layer(updated[:, -1]))
        # lesson: full-vocab
        logits = self.vocab_head(hidden)  # [B, C]
        # lesson end
        return {
            "E": E,
            "Q": Q,
            "K": K,
            "V": V,
            "scores": scores,
            "mask": mask,
            "A": A,
            "messages": messages,
            "joined": joined,
            "updated": updated,
            "hidden": hidden,
            "logits": logits,
        }
