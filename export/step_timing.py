"""Milliseconds per training update of a registry model, on synthetic windows of the real shapes.

One AdamW update as ``train.train_run`` makes it (forward, loss, backward, step) on a batch whose
first half is left-padded, as real windows near a story's start are. The protocol's own wall-clock
times include every validation pass and depend on what else the machine was doing; this short,
separate measurement is what the site quotes as the cost of an update.
"""

from __future__ import annotations

import time

import torch

from .models import build_model, loss_fn


def time_steps(
    name: str, path: str, B: int, T: int, C: int, warmup: int, steps: int
) -> list[float]:
    """Milliseconds of each of ``steps`` updates after ``warmup``; ``path`` "final" (training's) or "full"."""
    torch.manual_seed(0)
    model = build_model(name, C, T)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    x = torch.randint(4, C, (B, T))
    x[: B // 2, : T // 2] = 0
    y = torch.randint(4, C, (B,))
    forward = (lambda v: model.forward_full(v)["logits"]) if path == "full" else model
    times = []
    for i in range(warmup + steps):
        start = time.perf_counter()
        loss = loss_fn(forward(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if i >= warmup:
            times.append((time.perf_counter() - start) * 1000)
    return times
