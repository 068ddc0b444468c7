"""The training protocol: every model x seed, one resumable run folder each, and their aggregates.

Each run is one command writing one folder, ``runs/<model>-seed<seed>/``
(``best.pt``, the selected state dict, then ``result.json``, each written
atomically): ``python -m export train --models M --seeds S``. A finished run
(same data and settings, its checkpoint loads and matches its result file) is
skipped, so an interrupted protocol resumes where it stopped. Runs in parallel
come from an engine that already exists: ``make -j3 models`` runs three at a
time (one Make target per run), a cluster runs the same command per run.
One run itself (config, schedule, loop, evaluation) is ``export/train.py``.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict
from pathlib import Path

import torch

from . import atomic
from .artefacts import run_dir
from .checkpoints import CheckpointError, load_full, save_full
from .cli_checks import check_runs_folder
from .corpus import Corpus
from .models import count_parameters, get_spec
from .train import RunResult, TrainConfig, train_run


def load_finished(
    runs: Path, name: str, seed: int, corpus: Corpus, cfg: TrainConfig, log=print
) -> RunResult | None:
    """The run's result when it is finished: its result file matches these settings and its checkpoint loads and fits."""
    folder = run_dir(runs, name, seed)
    path, ckpt = folder / "result.json", folder / "best.pt"
    if not path.is_file() or not ckpt.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        result = RunResult(**data)
    except (json.JSONDecodeError, TypeError) as exc:
        log(f"note: ignoring unreadable {path} ({exc}); the run will be redone")
        return None
    if result.key != {
        "corpus": corpus.key(),
        **json.loads(json.dumps(cfg.run_key(name))),
    }:
        return None
    try:
        model = load_full(ckpt)
    except CheckpointError as exc:
        log(f"note: {exc}; the run will be redone")
        return None
    spec = get_spec(name)
    problems = [
        what
        for what, bad in (
            (
                "another model",
                model.spec.name != name or not model.spec.same_architecture(spec),
            ),
            (
                "another vocabulary or context",
                (model.C, model.T) != (len(corpus.vocab), corpus.T),
            ),
            ("another parameter count", count_parameters(model) != result.parameters),
        )
        if bad
    ]
    if problems:
        log(
            f"note: {ckpt} holds {' and '.join(problems)} than {path.name} says; the run will be redone"
        )
        return None
    return result


def train_or_reuse(
    name: str,
    seed: int,
    corpus: Corpus,
    cfg: TrainConfig,
    runs: Path,
    progress: bool = True,
    log=print,
    device: torch.device | str = "cpu",
) -> RunResult:
    """One run: reused when finished, otherwise trained and written (checkpoint first, then its result)."""
    done = load_finished(runs, name, seed, corpus, cfg, log)
    if done is not None:
        log(
            f"{name} seed {seed}: already trained (test perplexity {done.test_perplexity:.2f}), skipped"
        )
        return done
    folder = run_dir(runs, name, seed)
    result, model = train_run(name, seed, corpus, cfg, progress, device)
    save_full(folder / "best.pt", get_spec(name), model, corpus.vocab.fingerprint())
    # last: a run without it is not finished
    atomic.write_json(folder / "result.json", asdict(result))
    log(
        f"{name} seed {seed}: best update {result.best_update}, val {result.val_loss:.4f}, "
        f"test perplexity {result.test_perplexity:.2f}, {result.train_seconds:.0f} s"
    )
    return result


def run_protocol(
    corpus: Corpus,
    cfg: TrainConfig,
    runs: Path,
    progress: bool = True,
    log=print,
    device: torch.device | str = "cpu",
) -> list[RunResult]:
    """Every model for every seed, seed by seed so the seed-11 models are ready first (one after another)."""
    check_runs_folder(runs)
    return [
        train_or_reuse(name, seed, corpus, cfg, runs, progress, log, device)
        for seed in cfg.seeds
        for name in cfg.models
    ]


def aggregate(results: list[RunResult]) -> dict:
    """Mean and sample sd (n - 1) per model; each run's perplexity is exp(its loss) before averaging."""
    out = {}
    for name in dict.fromkeys(r.model for r in results):
        rs = [r for r in results if r.model == name]
        ppl = [r.test_perplexity for r in rs]
        loss = [r.test_loss for r in rs]
        secs = [r.train_seconds for r in rs]
        sd = lambda xs: statistics.stdev(xs) if len(xs) > 1 else 0.0
        out[name] = {
            "runs": len(rs),
            "seeds": [r.seed for r in rs],
            "parameters": rs[0].parameters,
            "perplexity_mean": statistics.fmean(ppl),
            "perplexity_sd": sd(ppl),
            "test_loss_mean": statistics.fmean(loss),
            "test_loss_sd": sd(loss),
            "train_seconds_mean": statistics.fmean(secs),
            "train_seconds_sd": sd(secs),
        }
    return out


def relative_change(
    aggregates: dict, new: str | None = None, old: str | None = None
) -> float | None:
    """(new - old) / old in mean perplexity; by default the most-heads model against the one-head one."""
    from .models import most_heads_model, single_head_model

    new, old = new or most_heads_model().name, old or single_head_model().name
    if new not in aggregates or old not in aggregates:
        return None
    a, b = aggregates[new]["perplexity_mean"], aggregates[old]["perplexity_mean"]
    return (a - b) / b


def command(args, corpus=None):
    """``python -m export train``: the protocol, or the one run ``--models M --seeds S`` names."""
    from .corpus import corpus_from_options
    from .device import resolve_device
    from .cli_checks import check_out
    from .options import train_config

    check_out(args)
    cfg = train_config(args)
    device = resolve_device(args.device)
    if args.threads:
        torch.set_num_threads(args.threads)
    corpus = corpus or corpus_from_options(args)
    print(f"training on {device.type}")
    results = run_protocol(
        corpus, cfg, Path(args.runs), progress=not args.no_progress, device=device
    )
    return corpus, cfg, results


def stage(ctx) -> None:
    ctx.corpus, ctx.cfg, ctx.results = command(ctx.args, ctx.get_corpus())


def runs_command(args) -> None:
    """One name per run (``<model>-seed<seed>``), for one Make target per run."""
    print(" ".join(run_dir("", m, s).name for s in args.seeds for m in args.models))
