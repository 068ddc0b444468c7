"""Continue a token history one id at a time, as the browser app does.

Each step: crop the history to its last T ids and left-pad it with PAD, run the
model, forbid PAD, BOS and UNK, then take the highest score (greedy,
``temperature == 0``) or sample from softmax(logits / temperature). EOS ends
the story and is not added to it. At most ``max_new_tokens`` ids are produced.

Sampling uses ``Mulberry32``, a tiny seeded generator that the browser
runtime implements identically, so a seed gives the same draws in both.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .defaults import MIN_TEMPERATURE, PRESET_MAX_NEW
from .windows import context_window
from .wordlm import BOS_ID, EOS_ID, PAD_ID, UNK_ID, detokenize, tokenize

EXCLUDED_IDS = (PAD_ID, BOS_ID, UNK_ID)
MAX_NEW_TOKENS = 64


class Mulberry32:
    """32-bit seeded generator; ``random()`` returns a float in [0, 1)."""

    def __init__(self, seed: int):
        self.state = seed & 0xFFFFFFFF

    def random(self) -> float:
        self.state = (self.state + 0x6D2B79F5) & 0xFFFFFFFF
        t = self.state
        t = ((t ^ (t >> 15)) * (t | 1)) & 0xFFFFFFFF
        t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & 0xFFFFFFFF)) & 0xFFFFFFFF
        return ((t ^ (t >> 14)) & 0xFFFFFFFF) / 4294967296


# lesson: choose-next
def choose_next(
    logits: np.ndarray, temperature: float = 0.0, rng: Mulberry32 | None = None
) -> int:
    """Pick the next id from one row of logits (float array of length C)."""
    check_temperature(temperature)
    scores = np.asarray(logits, dtype=np.float64).copy()
    if not np.all(np.isfinite(scores)):
        raise ValueError("the model returned non-finite logits")
    scores[list(EXCLUDED_IDS)] = -np.inf
    if temperature <= 0:
        return int(np.argmax(scores))
    if rng is None:
        raise ValueError("sampling needs a seeded generator")
    z = scores / temperature
    p = np.exp(z - z.max())
    cumulative = np.cumsum(p)
    u = rng.random() * cumulative[-1]
    return int(min(np.searchsorted(cumulative, u, side="right"), len(p) - 1))


def check_temperature(temperature: float) -> None:
    if not (
        isinstance(temperature, (int, float))
        and math.isfinite(temperature)
        and temperature >= 0
    ):
        raise ValueError(
            f"temperature must be a finite number, 0 (greedy) or more, not {temperature!r}"
        )
    if 0 < temperature < MIN_TEMPERATURE:
        raise ValueError(
            f"temperature {temperature!r} is below the smallest one, {MIN_TEMPERATURE}: "
            f"use 0 for greedy or at least {MIN_TEMPERATURE}"
        )


# lesson: prompt-history
def prompt_history(itos: list[str], prompt: str) -> list[int]:
    """BOS plus the prompt's ids (unknown words become UNK); no EOS: the story goes on."""
    stoi = {t: i for i, t in enumerate(itos)}
    return [BOS_ID] + [stoi.get(t, UNK_ID) for t in tokenize(prompt)]


def torch_predictor(model):
    """Window ids [1, T] (numpy int64) -> logits [C] from a PyTorch model."""
    model.eval()

    @torch.no_grad()
    def predict(window: np.ndarray) -> np.ndarray:
        out = model(torch.from_numpy(window))
        return (out[0] if isinstance(out, tuple) else out)[0].numpy()

    return predict


def generate_ids(
    model_or_predict,
    history: list[int],
    max_new_tokens: int = PRESET_MAX_NEW,
    temperature: float = 0.0,
    seed: int = 0,
    T: int | None = None,
) -> tuple[list[int], bool]:
    """New ids after ``history`` and whether EOS ended them.

    ``model_or_predict`` is a PyTorch model or any function from a window
    (int64 array [1, T]) to logits [C], e.g. an onnxruntime session wrapper.
    """
    if not 1 <= max_new_tokens <= MAX_NEW_TOKENS:
        raise ValueError(f"max_new_tokens must be between 1 and {MAX_NEW_TOKENS}")
    check_temperature(temperature)
    if isinstance(model_or_predict, torch.nn.Module):
        T = T or model_or_predict.T
        predict = torch_predictor(model_or_predict)
    else:
        predict = model_or_predict
    if T is None:
        raise ValueError("T is needed when a predict function is given")
    rng = Mulberry32(seed) if temperature > 0 else None
    # lesson: generation-loop
    history, new = list(history), []
    for _ in range(max_new_tokens):
        window = np.asarray([context_window(history, T)], dtype=np.int64)
        next_id = choose_next(predict(window), temperature, rng)
        if next_id == EOS_ID:
            return new, True
        history.append(next_id)
        new.append(next_id)
    return new, False


def generate_text(
    model,
    itos: list[str],
    prompt: str,
    max_new_tokens: int = PRESET_MAX_NEW,
    temperature: float = 0.0,
    seed: int = 0,
    T: int | None = None,
) -> dict:
    history = prompt_history(itos, prompt)
    ids, ended = generate_ids(model, history, max_new_tokens, temperature, seed, T)
    tokens = [itos[i] for i in ids]
    return {
        "ids": ids,
        "tokens": tokens,
        "text": detokenize(tokens),
        "ended_with_eos": ended,
    }


# lesson: perplexity
def perplexity(loss: float) -> float:
    return math.exp(loss)


def command(args) -> None:
    """``python -m export generate``: continue a prompt with a full or compact checkpoint."""
    import json
    from pathlib import Path

    from .checkpoints import check_vocabulary, load_checkpoint

    model = load_checkpoint(args.checkpoint)
    if not Path(args.vocab).is_file():
        raise FileNotFoundError(
            f"{args.vocab} not found: pass --vocab PATH, the vocab.json written with this checkpoint"
        )
    try:
        vocab = json.loads(Path(args.vocab).read_text())
        itos = vocab["itos"]
    except (json.JSONDecodeError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise ValueError(
            f"{args.vocab} is not a vocab.json ({type(exc).__name__}: {exc})"
        ) from None
    check_vocabulary(model, itos, args.vocab)
    out = generate_text(
        model,
        itos,
        args.prompt,
        max_new_tokens=args.max_new_tokens,
        temperature=args.temperature,
        seed=args.seed,
    )
    print(out["text"])
