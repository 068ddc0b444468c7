"""The model registry: every model of the comparison, by name, in one place.

Training, checkpoints, the evidence, the ONNX export and the browser's
manifest all read ``MODELS``. Adding a model is one line here plus a retrain,
for example ``ModelSpec("two_heads", "Two heads", "attention", heads=2,
colour="#CC79A7")``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .defaults import D_MODEL, HIDDEN
from .mlp import MLPLM
from .multihead import MultiHeadAttentionLM

KINDS = ("mlp", "attention")


@dataclass(frozen=True)
class ModelSpec:
    """What a model is: its name, how the site labels it, its kind and sizes."""

    name: str
    label: str
    kind: str  # "mlp" or "attention"
    heads: int = 0  # 0 for the MLP
    d_model: int = D_MODEL
    hidden: int = HIDDEN
    colour: str = "#999999"  # the model's colour (light scheme; export/palette.py): plots, figures, manifest
    colour_dark: str = "#bbbbbb"  # the same on the dark scheme
    # Whether the browser gets it (ONNX file, manifest entry, compact checkpoint). The head-count
    # sweep's models are trained and measured like the others but not shipped.
    ships: bool = True

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(
                f"model {self.name!r}: kind must be one of {KINDS}, not {self.kind!r}"
            )
        if self.kind == "mlp" and self.heads:
            raise ValueError(f"model {self.name!r}: an MLP has no heads")
        if self.kind == "attention" and (self.heads < 1 or self.d_model % self.heads):
            raise ValueError(
                f"model {self.name!r}: heads must be at least 1 and divide d_model={self.d_model}"
            )

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads if self.heads else 0

    def build(self, C: int, T: int) -> nn.Module:
        """A freshly initialised model of this spec for a vocabulary of C ids and windows of T."""
        if self.kind == "mlp":
            return MLPLM(C, T, d_model=self.d_model, hidden=self.hidden)
        return MultiHeadAttentionLM(
            C, T, d_model=self.d_model, hidden=self.hidden, heads=self.heads
        )

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "ModelSpec":
        return cls(**data)

    def same_architecture(self, other: "ModelSpec") -> bool:
        return (self.kind, self.heads, self.d_model, self.hidden) == (
            other.kind,
            other.heads,
            other.d_model,
            other.hidden,
        )


# Model colours are olive and greys (a sage for two heads in the dark scheme, where a grey far enough from the
# others is too faint), never near one of the head colours (export/palette.py).
MODELS = (
    ModelSpec("mlp", "MLP", "mlp", colour="#5e4b00", colour_dark="#d6d47e"),
    ModelSpec(
        "one_head",
        "One head",
        "attention",
        heads=1,
        colour="#595959",
        colour_dark="#9a9a9a",
    ),
    ModelSpec(
        "four_heads",
        "Four heads",
        "attention",
        heads=4,
        colour="#1f1f1f",
        colour_dark="#ececec",
    ),
    # The head-count sweep (page 5, "How many heads?"): width 64 too, so heads 32, 8 and 4 wide. Trained and
    # measured like the others, not shipped (page 5's toy task draws its 2-head models in two_heads' grey).
    ModelSpec(
        "two_heads",
        "Two heads",
        "attention",
        heads=2,
        colour="#939393",
        colour_dark="#588060",
        ships=False,
    ),
    ModelSpec(
        "eight_heads",
        "Eight heads",
        "attention",
        heads=8,
        colour="#cdcdcd",
        colour_dark="#262626",
        ships=False,
    ),
    ModelSpec(
        "sixteen_heads",
        "Sixteen heads",
        "attention",
        heads=16,
        colour="#a0a000",
        colour_dark="#a0a032",
        ships=False,
    ),
)
REGISTRY = {spec.name: spec for spec in MODELS}
MODEL_NAMES = tuple(REGISTRY)
MODEL_LABELS = {spec.name: spec.label for spec in MODELS}


# Queries: code outside the registry asks these instead of typing a model's name.


def shipped_models() -> tuple[ModelSpec, ...]:
    """The models the site ships (a registry entry may be a sweep model that is trained but not shipped)."""
    return tuple(s for s in MODELS if s.ships)


def attention_models(shipped: bool = True) -> tuple[ModelSpec, ...]:
    """The attention models, fewest heads first."""
    pool = shipped_models() if shipped else MODELS
    return tuple(
        sorted((s for s in pool if s.kind == "attention"), key=lambda s: s.heads)
    )


def single_head_model() -> ModelSpec:
    """The shipped one-head attention model: the comparison's baseline for multi-head attention."""
    return next(s for s in attention_models() if s.heads == 1)


def most_heads_model() -> ModelSpec:
    """The shipped attention model with the most heads (the one whose heads the lesson takes apart)."""
    return attention_models()[-1]


def get_spec(name: str) -> ModelSpec:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"unknown model {name!r}; choose one of {', '.join(MODEL_NAMES)}"
        ) from None


def build_model(spec: ModelSpec | str, C: int, T: int) -> nn.Module:
    return (get_spec(spec) if isinstance(spec, str) else spec).build(C, T)


# lesson: count-parameters
def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


# lesson: loss
def loss_fn(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy (natural log), the training loss of every model."""
    return F.cross_entropy(logits, targets)
