"""The evidence's runs, read from their tracked records, and the shipped models compared paired by seed.

The evidence stage takes ``runs``, ``aggregates`` and ``comparison`` from the
run records (``export/run_records.py``) rather than from the measurements, so
it needs no ``runs/`` folder; and it adds ``paired``: every shipped model
against the model with the most heads, seed by seed with a 95 % t-interval
(``export/paired.py``), over the source's seeds and over every declared seed
with a finished run. ``paired.extra_runs`` holds those runs of the extra seeds.
"""

from __future__ import annotations

from pathlib import Path

from . import paired, run_records
from .artefacts import RECORDS_DIR
from .defaults import EXTRA_SEEDS
from .models import most_heads_model, single_head_model
from .protocol import aggregate, relative_change


def comparison_section(aggregates: dict) -> dict:
    """Four heads against one head in mean perplexity; whether it is a difference is ``paired``'s to say."""
    change = relative_change(aggregates)
    comparison = {"relative_change_four_vs_one": change}
    if change is not None:
        four, one = (
            aggregates[most_heads_model().name],
            aggregates[single_head_model().name],
        )
        comparison["perplexity_gap"] = one["perplexity_mean"] - four["perplexity_mean"]
    return comparison


def sections(
    measured: dict, records: Path = RECORDS_DIR, runs: Path | None = None
) -> dict:
    """``runs``, ``aggregates``, ``comparison`` and ``paired`` of the protocol's models and seeds."""
    models, seeds = (
        list(measured["protocol"]["models"]),
        list(measured["protocol"]["seeds"]),
    )
    results = run_records.read(models, seeds, records, runs)
    extra_seeds = [s for s in EXTRA_SEEDS if s not in seeds]
    extra = run_records.read_optional(models, extra_seeds, results[0], records, runs)
    aggregates = aggregate(results)
    out = {
        "runs": [r.record() for r in results],
        "aggregates": aggregates,
        "comparison": comparison_section(aggregates),
    }
    if most_heads_model().name in models:
        out["paired"] = {
            **paired.section(
                results,
                extra,
                models,
                most_heads_model().name,
                seeds,
                seeds + extra_seeds,
            ),
            "extra_runs": [r.record() for r in extra],
        }
    return out
