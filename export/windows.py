"""Whole-story splits, next-token windows and the per-split audit.

Stories are split into train / validation / test before any window exists,
so no window of one split shares a story with another.

A story's ids are ``[BOS] + tokens + [EOS]``. For every position t >= 1 the
input is the ``T`` ids before t, left-padded with PAD, and the target is
``ids[t]``: each ordinary token is a target once and EOS once more, so a split
has exactly (ordinary tokens + stories) windows.

Windows are not stored one by one. Each split keeps a flat id array in which
every story is preceded by ``T`` PADs; window i is then the slice
``flat[pos[i] - T : pos[i]]`` with target ``flat[pos[i]]``. The PAD run before
each story is exactly the left padding, so no window can reach the previous
story.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import torch

from .wordlm import PAD_ID, UNK_ID, Vocabulary

SPLIT_SEED = 20240531
SPLIT_FRACTIONS = {"train": 0.8, "validation": 0.1, "test": 0.1}
SPLITS = tuple(SPLIT_FRACTIONS)


class SplitError(ValueError):
    pass


# lesson: split-indices
def split_indices(n: int, seed: int = SPLIT_SEED) -> dict[str, list[int]]:
    """Shuffle story indices with a fixed seed and cut them 80 / 10 / 10."""
    if n < len(SPLITS):
        raise SplitError(
            f"need at least {len(SPLITS)} stories for train, "
            f"validation and test; got {n}"
        )
    order = list(range(n))
    random.Random(seed).shuffle(order)
    n_val = max(1, round(n * SPLIT_FRACTIONS["validation"]))
    n_test = max(1, round(n * SPLIT_FRACTIONS["test"]))
    n_train = n - n_val - n_test
    if n_train < 1:
        raise SplitError(f"{n} stories leave no training story")
    return {
        "train": sorted(order[:n_train]),
        "validation": sorted(order[n_train : n_train + n_val]),
        "test": sorted(order[n_train + n_val :]),
    }


@dataclass
class WindowSet:
    """All next-token windows of one split."""

    flat: torch.Tensor  # int64 [L]: per story, T PADs then its ids
    positions: torch.Tensor  # int64 [N]: index of each window's target in flat
    T: int

    def __len__(self) -> int:
        return int(self.positions.numel())

    # lesson: window-batch
    def batch(self, index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Inputs [B, T] and targets [B] for the given window numbers."""
        pos = self.positions[index]
        offsets = torch.arange(-self.T, 0)
        return self.flat[pos[:, None] + offsets], self.flat[pos]

    def all(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self.batch(torch.arange(len(self)))


# lesson: make-windows
def make_windows(stories_ids: list[list[int]], T: int) -> WindowSet:
    """Build the windows of stories already encoded with BOS ... EOS."""
    chunks, positions, offset = [], [], 0
    for ids in stories_ids:
        chunks.append(np.full(T, PAD_ID, dtype=np.int64))
        chunks.append(np.asarray(ids, dtype=np.int64))
        start = offset + T  # index of this story's BOS in flat
        positions.append(np.arange(start + 1, start + len(ids), dtype=np.int64))
        offset += T + len(ids)
    flat = (
        torch.from_numpy(np.concatenate(chunks))
        if chunks
        else torch.zeros(0, dtype=torch.long)
    )
    pos = (
        torch.from_numpy(np.concatenate(positions))
        if positions
        else torch.zeros(0, dtype=torch.long)
    )
    return WindowSet(flat, pos, T)


# lesson: context-window
def context_window(history: list[int], T: int) -> list[int]:
    """The last T ids of ``history``, left-padded with PAD: what the model reads."""
    visible = history[-T:]
    return [PAD_ID] * (T - len(visible)) + visible


def audit_split(token_lists: list[list[str]], vocab: Vocabulary) -> dict:
    tokens = sum(len(t) for t in token_lists)
    oov = sum(1 for toks in token_lists for t in toks if t not in vocab.stoi)
    return {
        "stories": len(token_lists),
        "tokens": tokens,
        "windows": tokens + len(token_lists),
        "oov_tokens": oov,
        "oov_rate": oov / tokens if tokens else 0.0,
    }


def count_unk(ids: list[int]) -> int:
    return sum(1 for i in ids if i == UNK_ID)
