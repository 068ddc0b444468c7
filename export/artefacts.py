"""Where the pipeline's artefacts live: one folder, and one name for each file in it.

Every writer (the pipeline stages) and every reader (the site's hooks, the
notebook, the downloads, the benchmarks, the tests) asks this module for a
path instead of spelling it. The folder is ``wasm_assets/`` beside the
project, or ``$MHA_WASM_ASSETS`` when set (throwaway models while developing);
a caller may also pass a folder of its own (``--out``).

This module imports nothing heavy (no torch, no numpy): the site build, which
only renders, uses it too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .defaults import PRESET_SEED

ENV_VAR = "MHA_WASM_ASSETS"
PROJECT_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DIR = PROJECT_ROOT / "wasm_assets"


def assets_dir(override: str | os.PathLike | None = None) -> Path:
    """The artefact folder: ``override``, else ``$MHA_WASM_ASSETS``, else ``wasm_assets/``."""
    if override:
        return Path(override)
    return Path(os.environ.get(ENV_VAR) or DEFAULT_DIR)


@dataclass(frozen=True)
class Artefacts:
    """The named files of one artefact folder. ``Artefacts()`` is the default folder."""

    root: Path = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", assets_dir(self.root))

    # The tokenizer
    @property
    def vocab(self) -> Path:
        return self.root / "vocab.json"

    @property
    def tokenizer_vectors(self) -> Path:
        return self.root / "tokenizer_vectors.json"

    # The models the browser runs, and their compact checkpoints
    @property
    def models_dir(self) -> Path:
        return self.root / "models"

    def model_onnx(self, name: str) -> Path:
        return self.models_dir / f"{name}.onnx"

    def teaching_onnx(self, name: str) -> Path:
        """Page 4's stepper: forward_full with every intermediate tensor (export/teaching_graph.py)."""
        return self.models_dir / f"{name}.steps.onnx"

    @property
    def manifest(self) -> Path:
        return self.models_dir / "manifest.json"

    @property
    def checkpoints_dir(self) -> Path:
        return self.root / "checkpoints"

    def checkpoint(self, name: str, seed: int = PRESET_SEED) -> Path:
        return self.checkpoints_dir / f"{name}-seed{seed}.pt"

    @property
    def parity(self) -> Path:
        return self.root / "parity.json"

    # Measurements
    @property
    def evidence(self) -> Path:
        return self.root / "evidence.json"

    @property
    def heads(self) -> Path:
        return self.root / "heads.json"

    @property
    def head_atlas_svg(self) -> Path:
        return self.root / "head_atlas.svg"

    @property
    def validation_traces_svg(self) -> Path:
        return self.root / "validation_traces.svg"

    # Why several heads: the one-vs-several-head toy task and the heads forming in training
    @property
    def toy_task(self) -> Path:
        return self.root / "toy_task.json"

    @property
    def head_growth(self) -> Path:
        return self.root / "head_growth.json"

    @property
    def head_sweep(self) -> Path:
        return self.root / "head_sweep.json"

    # Page data
    @property
    def palette_css(self) -> Path:
        """The head and model colours as CSS custom properties (``python -m export palette``)."""
        return self.root / "palette.css"

    @property
    def worksheet(self) -> Path:
        return self.root / "worksheet.json"

    @property
    def subwords(self) -> Path:
        return self.root / "subwords.json"

    @property
    def bpe_tokenizer(self) -> Path:
        """Page 3's byte-pair encoder, in Hugging Face tokenizers' own JSON format."""
        return self.root / "bpe_tokenizer.json"

    @property
    def walkthrough(self) -> Path:
        return self.root / "walkthrough.json"

    @property
    def notebook(self) -> Path:
        return self.root / "mha-lesson.ipynb"

    @property
    def notebook_requirements(self) -> Path:
        """Exact versions the notebook last ran with (the downloads' requirements.txt)."""
        return self.root / "notebook-requirements.txt"

    @property
    def page_data(self) -> Path:
        """What the page hooks draw and tabulate, computed by ``python -m export pagedata``."""
        return self.root / "page_data.json"

    @property
    def build_weights(self) -> Path:
        """The build exercise's attention weights, read from the shipped four-head ONNX."""
        return self.root / "build_weights.json"

    @property
    def build_notebook(self) -> Path:
        """The build exercise as a notebook, for the downloads (export/lesson/build_notebook.py)."""
        return self.root / "build-it-yourself.ipynb"

    @property
    def example_search(self) -> Path:
        """Page 1's example sentence, chosen by a search (written by the prose tooling when present)."""
        return self.root / "example_search.json"

    # microgpt
    @property
    def microgpt_trained(self) -> Path:
        return self.root / "microgpt-trained.json"

    @property
    def microgpt_one_head(self) -> Path:
        """The same microgpt trained with one head over all 16 numbers (the honest comparison)."""
        return self.root / "microgpt-one-head.json"

    @property
    def microgpt_heads(self) -> Path:
        """Where the heads matter: both microgpts measured over the whole names list (export/microgpt/head_effect.py)."""
        return self.root / "microgpt_heads.json"


# Every finished training run's record (its result.json), tracked in git: the sweep and the
# evidence rebuild from these, so a fresh checkout needs no runs/ folder (export/run_records.py).
RECORDS_DIR = PROJECT_ROOT / "records" / "runs"


def run_record(records: str | os.PathLike, name: str, seed: int) -> Path:
    """One run's record inside a records folder."""
    return Path(records) / f"{name}-seed{seed}.json"


def run_dir(runs: str | os.PathLike, name: str, seed: int) -> Path:
    """The folder of one training run inside a runs folder."""
    return Path(runs) / f"{name}-seed{seed}"


# What one stage hands to a later one in the runs folder (never shipped).
def onnx_report(runs: str | os.PathLike) -> Path:
    """The onnx stage's figures for every encoding tried, which the measure stage puts in the evidence."""
    return Path(runs) / "onnx_report.json"


def onnx_rebuild(runs: str | os.PathLike) -> Path:
    """``onnx --from-checkpoints``'s new byte sizes, which the evidence stage takes."""
    return Path(runs) / "onnx_rebuild.json"


def measurements_json(runs: str | os.PathLike) -> Path:
    """The measure stage's output: evidence.json's core."""
    return Path(runs) / "measurements.json"
