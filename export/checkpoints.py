"""Save and load model checkpoints: torch and numpy only, no ONNX.

Two formats, both read by ``load_checkpoint``:

* full (``runs/<model>-seed<seed>/best.pt``): the trained float32 state dict;
* compact (``wasm_assets/checkpoints/<model>-seed11.pt``): the shipped,
  rounded model, its large matrices stored as int8 rows with one float32
  scale per row, or as float16 (``ENCODINGS``). Loading widens them back, so
  the PyTorch model equals what runs in the browser.

Every checkpoint stores its model's ``ModelSpec`` (name, label, kind, sizes),
the model's config (C, T, ...) and the fingerprint of the vocabulary it was
trained with. Loading rebuilds exactly that spec and never guesses. Files
written before checkpoints named their spec (format 1: only a config) are
accepted when exactly one registry spec has their architecture.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import numpy as np
import torch
from torch import nn

from . import atomic
from .models import MODELS, REGISTRY, ModelSpec

FULL_FORMAT = "mha-checkpoint/2"
COMPACT_FORMAT = "mha-compact/2"

MIN_QUANT_ELEMENTS = 8192  # smaller tensors stay float32: the saving is negligible
QUANTIZED = (
    "token_embedding.weight",
    "hidden_layer.weight",
    "vocab_head.weight",
    "W_Q.weight",
    "W_K.weight",
    "W_V.weight",
    "W_O.weight",
)
# Candidate encodings of the compact file and the ONNX model, smallest first:
# parameter name -> "int8" | "fp16". Everything else stays float32.
ENCODINGS = {
    "int8": {n: "int8" for n in QUANTIZED},
    "int8 + float16 output layer": {
        **{n: "int8" for n in QUANTIZED},
        "vocab_head.weight": "fp16",
    },
    "float16": {n: "fp16" for n in QUANTIZED},
    "float32": {},
}
DESCRIPTIONS = {
    "int8": "int8 weights (per-row scale), float32 compute",
    "int8 + float16 output layer": "int8 weights (per-row scale) with a float16 output layer, float32 compute",
    "float16": "float16 weights, float32 compute",
    "float32": "float32",
}


class CheckpointError(ValueError):
    pass


def row_quantize(w: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 per row: w ~= q * scale[:, None]."""
    a = w.detach().cpu().numpy().astype(np.float32)
    scale = np.abs(a).max(axis=1) / 127.0
    scale[scale == 0] = 1.0  # the PAD row is all zeros
    scale = scale.astype(np.float32)
    q = np.clip(np.rint(a / scale[:, None]), -127, 127).astype(np.int8)
    return q, scale


def plan(model: nn.Module, encoding: str) -> dict[str, str]:
    """Which parameters the encoding stores as int8 or float16 (large ones only)."""
    wanted = ENCODINGS[encoding]
    return {
        n: wanted[n]
        for n, p in model.named_parameters()
        if n in wanted and p.numel() >= MIN_QUANT_ELEMENTS
    }


def rounded_model(model: nn.Module, encoding: str = "int8") -> nn.Module:
    """A copy of ``model`` whose large weights hold exactly the values the encoding stores."""
    chosen = plan(model, encoding)
    model = copy.deepcopy(model)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if chosen.get(name) == "int8":
                q, scale = row_quantize(p)
                p.copy_(torch.from_numpy(q.astype(np.float32) * scale[:, None]))
            elif chosen.get(name) == "fp16":
                p.copy_(p.half().float())
    return model


def _header(
    spec: ModelSpec, model: nn.Module, fmt: str, vocab_fingerprint: str | None
) -> dict:
    return {
        "format": fmt,
        "spec": spec.to_json(),
        "config": model.config(),
        "vocab_fingerprint": vocab_fingerprint,
    }


def save_full(
    path: str | os.PathLike,
    spec: ModelSpec,
    model: nn.Module,
    vocab_fingerprint: str | None = None,
) -> Path:
    """A trained model as a float32 checkpoint."""
    state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    return atomic.save_torch(
        path,
        {**_header(spec, model, FULL_FORMAT, vocab_fingerprint), "state_dict": state},
    )


def save_compact(
    path: str | os.PathLike,
    spec: ModelSpec,
    model: nn.Module,
    encoding: str = "float32",
    vocab_fingerprint: str | None = None,
) -> Path:
    """The shipped (rounded) model: int8 rows + scales, float16 or float32 tensors. Exact and small."""
    chosen = plan(model, encoding)
    int8, scales, half, rest = {}, {}, {}, {}
    for name, p in model.state_dict().items():
        if chosen.get(name) == "int8":
            q, scale = row_quantize(p)
            int8[name], scales[name] = torch.from_numpy(q), torch.from_numpy(scale)
        elif chosen.get(name) == "fp16":
            half[name] = p.detach().cpu().half()
        else:
            rest[name] = p.detach().cpu().clone()
    return atomic.save_torch(
        path,
        {
            **_header(spec, model, COMPACT_FORMAT, vocab_fingerprint),
            "encoding": encoding,
            "int8": int8,
            "scales": scales,
            "float16": half,
            "float": rest,
        },
    )


def spec_of(saved: dict) -> ModelSpec:
    """The checkpoint's own spec; for format-1 files, the one registry spec with their architecture."""
    if "spec" in saved:
        spec = ModelSpec.from_json(saved["spec"])
        known = REGISTRY.get(spec.name)
        if known is not None and not known.same_architecture(spec):
            raise CheckpointError(
                f"it holds a {spec.name!r} model whose sizes differ from the registry's "
                f"{spec.name!r}; retrain it or give the changed model a new name"
            )
        return spec
    cfg = saved["config"]
    old = ModelSpec(
        "?",
        "?",
        cfg["kind"],
        heads=cfg.get("heads", 0),
        d_model=cfg["d_model"],
        hidden=cfg["hidden"],
    )
    matches = [s for s in MODELS if s.same_architecture(old)]
    if len(matches) != 1:
        raise CheckpointError(
            f"it does not name its model and {len(matches)} registry models have its architecture; "
            "export it again"
        )
    return matches[0]


def _read(path) -> dict:
    saved = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(saved, dict) or "config" not in saved:
        raise CheckpointError("it holds no model config")
    return saved


def _state_of(saved: dict) -> dict:
    if "state_dict" in saved:
        return saved["state_dict"]
    state = dict(saved["float"])
    state.update({k: v.float() for k, v in saved.get("float16", {}).items()})
    for k, q in saved["int8"].items():
        state[k] = q.float() * saved["scales"][k][:, None]
    return state


def load_checkpoint(path: str | os.PathLike, expect: str | None = None) -> nn.Module:
    """Rebuild the model of a full or compact checkpoint, in eval mode.

    The model carries ``spec`` (its ``ModelSpec``), ``encoding`` (``"float32"``
    for full checkpoints) and ``vocab_fingerprint`` (None in format-1 files).
    ``expect`` ("full" or "compact") refuses the other format.
    """
    if not Path(path).is_file():
        raise FileNotFoundError(
            f"checkpoint {path} not found: give the path of a best.pt in runs/ or of a "
            "compact checkpoint in wasm_assets/checkpoints/"
        )
    try:
        saved = _read(path)
        kind = "full" if "state_dict" in saved else "compact"
        if expect and kind != expect:
            raise CheckpointError(f"it is a {kind} checkpoint, not a {expect} one")
        spec = spec_of(saved)
        cfg = saved["config"]
        model = spec.build(cfg["C"], cfg["T"])
        model.load_state_dict(_state_of(saved))
    except FileNotFoundError:
        raise
    except Exception as exc:  # torch raises many kinds for a damaged file
        detail = (
            str(exc)
            if isinstance(exc, CheckpointError)
            else f"{type(exc).__name__}: {exc}"
        )
        raise CheckpointError(
            f"checkpoint {path} is damaged or not a model checkpoint ({detail}); "
            "write it again (a run: delete its folder and train again)"
        ) from None
    model.spec = spec
    model.encoding = (
        saved.get("encoding", "float32") if kind == "compact" else "float32"
    )
    if kind == "compact" and "encoding" not in saved:
        model.encoding = _legacy_encoding(model, saved)
    model.vocab_fingerprint = saved.get("vocab_fingerprint")
    return model.eval()


def load_full(path: str | os.PathLike) -> nn.Module:
    return load_checkpoint(path, expect="full")


def load_compact(path: str | os.PathLike) -> nn.Module:
    """The shipped (rounded) PyTorch model of a compact checkpoint."""
    return load_checkpoint(path, expect="compact")


def _legacy_encoding(model: nn.Module, saved: dict) -> str:
    stored = {
        **{k: "int8" for k in saved["int8"]},
        **{k: "fp16" for k in saved.get("float16", {})},
    }
    for label in ENCODINGS:
        if plan(model, label) == stored:
            return label
    raise CheckpointError("its stored tensors match none of the known encodings")


def check_vocabulary(
    model: nn.Module, itos: list[str], source: str = "the vocabulary"
) -> None:
    """Refuse a vocabulary the model was not trained with."""
    from .wordlm import Vocabulary, fingerprint

    Vocabulary(list(itos))  # four special tokens first, unique items
    if len(itos) != model.C:
        raise ValueError(
            f"{source} has {len(itos)} items but the model was trained with C = {model.C}; "
            "use the vocab.json written with this checkpoint"
        )
    expected = getattr(model, "vocab_fingerprint", None)
    if expected and fingerprint(itos) != expected:
        raise ValueError(
            f"{source} is not the one the model was trained with; use the vocab.json written with "
            "this checkpoint"
        )
