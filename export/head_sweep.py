"""How many heads? The attention model at one width with 1, 2, 4, 8 and 16 heads.

The sweep is not a second protocol: its runs are the protocol's own runs of
every attention model in the registry (same stories, vocabulary, width,
hidden layer, optimizer settings, update budget and seeds; selection on
validation), read from their records (``records/runs/<model>-seed<seed>.json``,
or ``runs/<model>-seed<seed>/result.json`` while the run folder is there:
``export/run_records.py``). This stage checks that they really were trained
alike, and writes ``head_sweep.json``:

``models``    per head count, smallest first: name, label, heads, head_dim,
              parameters, per-seed runs of the source's seeds (the same fields
              as the evidence's ``runs``) and the mean and sample sd of their
              test perplexity (the evidence's ``aggregate``); ``extra_runs``:
              the runs of the extra seeds finished so far
``findings``  the comparisons the page's sentences rest on: every head count
              against four heads, paired by seed, over the source's seeds and
              over every seed with a finished run (``export/paired.py``)
``timing``    (when measured) milliseconds per training update on one thread,
              from a short separate run (``--time-updates``): the protocol's
              own wall-clock times were taken on a shared machine
"""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path

from . import atomic
from . import paired, run_records
from .artefacts import RECORDS_DIR, Artefacts
from .defaults import EXTRA_SEEDS
from .models import MODELS, most_heads_model
from .protocol import aggregate
from .train import RunResult

SCHEMA = "mha-head-sweep/2"


def sweep_models() -> list[str]:
    """Every attention model of the registry at the default width, fewest heads first."""
    attention = [s for s in MODELS if s.kind == "attention"]
    return [s.name for s in sorted(attention, key=lambda s: s.heads)]


def read_runs(
    runs: Path | None,
    seeds: tuple[int, ...],
    models: list[str] | None = None,
    records: Path = RECORDS_DIR,
) -> list[RunResult]:
    """The finished runs of the sweep, refused in words when one is missing or was trained differently."""
    results = run_records.read(models or sweep_models(), seeds, records, runs)
    _check_alike(results)
    return results


def _check_alike(results: list[RunResult]) -> None:
    """Same corpus and the same settings for every run: only the head count may differ."""

    def settings(r: RunResult) -> dict:
        return {k: v for k, v in r.key.items()}

    first = results[0]
    for r in results[1:]:
        if settings(r) != settings(first):
            diff = sorted(
                k
                for k in set(settings(r)) | set(settings(first))
                if settings(r).get(k) != settings(first).get(k)
            )
            raise ValueError(
                f"{r.model} seed {r.seed} was trained with other settings than {first.model} seed "
                f"{first.seed} ({', '.join(diff)}): the sweep compares like with like only"
            )


def findings(
    models: list[dict], source_seeds: list[int], declared_seeds: list[int]
) -> dict:
    """Every head count against four heads, paired by seed (``export/paired.py``), and the sizes."""
    runs = [r for m in models for r in m["runs"]]
    extra = [r for m in models for r in m.get("extra_runs", [])]
    best = min(models, key=lambda m: m["perplexity_mean"])
    return {
        "reference": most_heads_model().name,
        "lowest_mean": best["name"],
        "paired": paired.section(
            runs,
            extra,
            [m["name"] for m in models],
            most_heads_model().name,
            source_seeds,
            declared_seeds,
        ),
        "parameters_equal": len({m["parameters"] for m in models}) == 1,
        "smallest_head_dim": min(m["head_dim"] for m in models),
        "models": [m["name"] for m in models],
    }


def build(
    runs: Path | None,
    seeds: tuple[int, ...],
    timing: dict | None = None,
    records: Path = RECORDS_DIR,
) -> dict:
    from .models import get_spec

    results = read_runs(runs, seeds, records=records)
    extra_seeds = [s for s in EXTRA_SEEDS if s not in seeds]
    extra = run_records.read_optional(
        sweep_models(), extra_seeds, results[0], records, runs
    )
    aggregates = aggregate(results)
    models = []
    for name in sweep_models():
        spec, agg = get_spec(name), aggregates[name]
        models.append(
            {
                "name": name,
                "label": spec.label,
                "heads": spec.heads,
                "head_dim": spec.head_dim,
                "parameters": agg["parameters"],
                "shipped": spec.ships,
                "runs": [r.record() for r in results if r.model == name],
                "extra_runs": [r.record() for r in extra if r.model == name],
                "perplexity_mean": agg["perplexity_mean"],
                "perplexity_sd": agg["perplexity_sd"],
                "test_loss_mean": agg["test_loss_mean"],
                "test_loss_sd": agg["test_loss_sd"],
            }
        )
    out = {
        "schema": SCHEMA,
        "seeds": list(seeds),
        "extra_seeds": extra_seeds,
        "d_model": get_spec(models[0]["name"]).d_model,
        "updates": results[0].updates,
        "batch_size": results[0].batch_size,
        "rule": paired.RULE,
        "models": models,
        "findings": findings(models, list(seeds), list(seeds) + extra_seeds),
    }
    if timing:
        out["timing"] = timing
    return out


def time_updates(
    C: int, T: int, batch_size: int, warmup: int = 5, steps: int = 40
) -> dict:
    """Median milliseconds per training update of every sweep model, one thread, same shapes as training."""
    import platform

    import torch

    from .step_timing import time_steps
    from .device import cpu_name

    torch.set_num_threads(1)
    load_before = os.getloadavg()
    per_model = {}
    for name in sweep_models():
        ms = time_steps(name, "final", batch_size, T, C, warmup, steps)
        per_model[name] = {
            "median_ms": statistics.median(ms),
            "min_ms": min(ms),
            "steps": steps,
        }
    return {
        "per_update": per_model,
        "threads": 1,
        "batch_size": batch_size,
        "warmup": warmup,
        "cpu": cpu_name(),
        "cores": os.cpu_count(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "load_average_before": list(load_before),
        "load_average_after": list(os.getloadavg()),
    }


def write(
    runs: Path | None,
    seeds: tuple[int, ...],
    out: Path,
    measure_time: bool = False,
    log=print,
    records: Path = RECORDS_DIR,
) -> Path:
    """The sweep stage: ``out/head_sweep.json`` (timing kept from the last write unless measured again)."""
    path = Artefacts(out).head_sweep
    timing = None
    if measure_time:
        vocab = json.loads(Artefacts(out).vocab.read_text())
        first = read_runs(runs, seeds[:1], sweep_models()[:1], records)[0]
        timing = time_updates(len(vocab["itos"]), vocab["T"], first.batch_size)
    elif path.is_file():
        timing = json.loads(path.read_text()).get("timing")
    data = build(runs, seeds, timing, records)
    atomic.write_json(path, data)
    f = data["findings"]["paired"]
    said = ", ".join(
        f"{name} {c['outcome'].replace('_', ' ')} (n={c['n']})"
        for name, c in f["all"].items()
    )
    log(f"wrote {path}: against {f['reference']}, paired by seed: {said}")
    return path


def stage(ctx) -> None:
    from .defaults import SEEDS

    models = getattr(ctx.args, "models", None)
    if models is not None and not set(sweep_models()) <= set(models):
        print(
            "sweep: skipped (--models leaves out some of the attention models; head_sweep.json unchanged)"
        )
        return
    seeds = tuple(getattr(ctx.args, "seeds", ()) or ()) or None
    write(
        ctx.runs,
        seeds or SEEDS,
        ctx.out,
        measure_time=getattr(ctx.args, "time_updates", False),
        records=ctx.records,
    )
