"""How many heads? The attention model at one width with 1, 2, 4, 8 and 16 heads.

The sweep is not a second protocol: its runs are the protocol's own runs of
every attention model in the registry (same stories, vocabulary, width,
hidden layer, optimizer settings, update budget and seeds; selection on
validation), read from ``runs/<model>-seed<seed>/result.json``. This stage
checks that they really were trained alike, and writes ``head_sweep.json``:

``models``    per head count, smallest first: name, label, heads, head_dim,
              parameters, per-seed runs (the same fields as the evidence's
              ``runs``) and the mean and
              sample sd of the test perplexity (the evidence's ``aggregate``)
``findings``  the comparisons the page's sentences rest on, each decided by
              the protocol's one rule: a gap counts when it is larger than
              the larger of the two standard deviations
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
from .artefacts import Artefacts, run_dir
from .models import MODELS
from .protocol import aggregate
from .train import RunResult

SCHEMA = "mha-head-sweep/1"


def sweep_models() -> list[str]:
    """Every attention model of the registry at the default width, fewest heads first."""
    attention = [s for s in MODELS if s.kind == "attention"]
    return [s.name for s in sorted(attention, key=lambda s: s.heads)]


def read_runs(runs: Path, seeds: tuple[int, ...], models: list[str] | None = None) -> list[RunResult]:
    """The finished runs of the sweep, refused in words when one is missing or was trained differently."""
    models = models or sweep_models()
    results = []
    for name in models:
        for seed in seeds:
            path = run_dir(runs, name, seed) / "result.json"
            if not path.is_file():
                raise ValueError(f"{path} is missing: train it first (python -m export train --models {name} "
                                 f"--seeds {seed} --runs {runs})")
            try:
                results.append(RunResult(**json.loads(path.read_text())))
            except (json.JSONDecodeError, TypeError) as exc:
                raise ValueError(f"{path} is not a finished run's result ({exc}); delete its folder and retrain") from None
    _check_alike(results)
    return results


def _check_alike(results: list[RunResult]) -> None:
    """Same corpus and the same settings for every run: only the head count may differ."""
    def settings(r: RunResult) -> dict:
        return {k: v for k, v in r.key.items()}

    first = results[0]
    for r in results[1:]:
        if settings(r) != settings(first):
            diff = sorted(k for k in set(settings(r)) | set(settings(first))
                          if settings(r).get(k) != settings(first).get(k))
            raise ValueError(f"{r.model} seed {r.seed} was trained with other settings than {first.model} seed "
                             f"{first.seed} ({', '.join(diff)}): the sweep compares like with like only")


def beyond_spread(a: dict, b: dict) -> bool:
    """The protocol's rule (``evidence.comparison``): a gap counts when it exceeds the larger sd."""
    return abs(a["perplexity_mean"] - b["perplexity_mean"]) > max(a["perplexity_sd"], b["perplexity_sd"])


def findings(models: list[dict]) -> dict:
    by_name = {m["name"]: m for m in models}
    best = min(models, key=lambda m: m["perplexity_mean"])
    worst = max(models, key=lambda m: m["perplexity_mean"])
    one = models[0]
    several = models[1:]
    multi_means = [m["perplexity_mean"] for m in several]
    return {
        "best": best["name"], "worst": worst["name"],
        "spread_of_means": worst["perplexity_mean"] - best["perplexity_mean"],
        "largest_sd": max(m["perplexity_sd"] for m in models),
        "gaps_to_best": {m["name"]: {"gap": m["perplexity_mean"] - best["perplexity_mean"],
                                     "beyond_spread": beyond_spread(m, best)}
                         for m in models if m["name"] != best["name"]},
        "neighbours": [{"fewer": a["name"], "more": b["name"],
                        "change": b["perplexity_mean"] - a["perplexity_mean"],
                        "beyond_spread": beyond_spread(a, b)} for a, b in zip(models, models[1:])],
        "one_head_worse_than_every_other": all(one["perplexity_mean"] > m["perplexity_mean"]
                                               and beyond_spread(one, m) for m in several),
        "multi_head_range": max(multi_means) - min(multi_means),
        "multi_head_alike": all(not beyond_spread(a, b) for a in several for b in several if a is not b),
        "parameters_equal": len({m["parameters"] for m in models}) == 1,
        "smallest_head_dim": min(m["head_dim"] for m in models),
        "models": list(by_name),
    }


def build(runs: Path, seeds: tuple[int, ...], timing: dict | None = None) -> dict:
    from .models import get_spec

    results = read_runs(Path(runs), seeds)
    aggregates = aggregate(results)
    models = []
    for name in sweep_models():
        spec, agg = get_spec(name), aggregates[name]
        models.append({
            "name": name, "label": spec.label, "heads": spec.heads, "head_dim": spec.head_dim,
            "parameters": agg["parameters"], "shipped": spec.ships,
            "runs": [r.record() for r in results if r.model == name],
            "perplexity_mean": agg["perplexity_mean"], "perplexity_sd": agg["perplexity_sd"],
            "test_loss_mean": agg["test_loss_mean"], "test_loss_sd": agg["test_loss_sd"],
        })
    out = {"schema": SCHEMA, "seeds": list(seeds), "d_model": get_spec(models[0]["name"]).d_model,
           "updates": results[0].updates, "batch_size": results[0].batch_size,
           "rule": "a gap counts when it is larger than the larger of the two sample standard deviations",
           "models": models, "findings": findings(models)}
    if timing:
        out["timing"] = timing
    return out


def time_updates(C: int, T: int, batch_size: int, warmup: int = 5, steps: int = 40) -> dict:
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
        per_model[name] = {"median_ms": statistics.median(ms), "min_ms": min(ms), "steps": steps}
    return {"per_update": per_model, "threads": 1, "batch_size": batch_size, "warmup": warmup,
            "cpu": cpu_name(), "cores": os.cpu_count(), "torch": torch.__version__,
            "python": platform.python_version(),
            "load_average_before": list(load_before), "load_average_after": list(os.getloadavg())}


def write(runs: Path, seeds: tuple[int, ...], out: Path, measure_time: bool = False, log=print) -> Path:
    """The sweep stage: ``out/head_sweep.json`` (timing kept from the last write unless measured again)."""
    path = Artefacts(out).head_sweep
    timing = None
    if measure_time:
        vocab = json.loads(Artefacts(out).vocab.read_text())
        first = read_runs(Path(runs), seeds[:1], sweep_models()[:1])[0]
        timing = time_updates(len(vocab["itos"]), vocab["T"], first.batch_size)
    elif path.is_file():
        timing = json.loads(path.read_text()).get("timing")
    data = build(runs, seeds, timing)
    atomic.write_json(path, data)
    f = data["findings"]
    log(f"wrote {path}: best {f['best']}, spread of means {f['spread_of_means']:.2f} "
        f"(largest sd {f['largest_sd']:.2f})")
    return path


def stage(ctx) -> None:
    from .defaults import SEEDS

    models = getattr(ctx.args, "models", None)
    if models is not None and not set(sweep_models()) <= set(models):
        print("sweep: skipped (--models leaves out some of the attention models; head_sweep.json unchanged)")
        return
    seeds = tuple(getattr(ctx.args, "seeds", ()) or ()) or None
    write(ctx.runs, seeds or SEEDS, ctx.out, measure_time=getattr(ctx.args, "time_updates", False))
