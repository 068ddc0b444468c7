"""Milliseconds per training step at the real configuration (B = 512, T = 64, C = 4000).

Times one AdamW update (forward, loss, backward, step) for the MLP and for
both attention models on both forward paths: the final-query path used in
training and the full causal path that computes every receiver. Prints a
table and the full/final ratio. Run: ``.venv/bin/python bench/train_step.py``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from export.models import MODELS, attention_models
from export.step_timing import time_steps
from export.device import cpu_name


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(
        f"machine: {cpu_name()}, {os.cpu_count()} cores, torch {torch.__version__} "
        f"({torch.get_num_threads()} threads), {platform.python_implementation()} {platform.python_version()}"
    )
    print(f"B = {args.batch}, T = 64, C = 4000; median of {args.steps} steps after {args.warmup} warm-up steps")
    print(f"{'model':<12}{'path':<13}{'median ms':>10}{'min ms':>9}")
    medians = {}
    cases = [(s.name, "-") for s in MODELS if s.kind == "mlp"]
    cases += [(s.name, path) for s in attention_models() for path in ("final-query", "full")]
    for name, path in cases:
        ts = time_steps(name, "full" if path == "full" else "final", args.batch, 64, 4000, args.warmup, args.steps)
        medians[name, path] = statistics.median(ts)
        print(f"{name:<12}{path:<13}{medians[name, path]:>10.1f}{min(ts):>9.1f}")
    for name in (s.name for s in attention_models()):
        ratio = medians[name, "full"] / medians[name, "final-query"]
        print(f"{name}: the full path takes {ratio:.2f}x the final-query path per step")


if __name__ == "__main__":
    main()
