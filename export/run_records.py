"""Every finished training run's record, kept in a tracked folder so that nothing needs ``runs/``.

A run writes ``runs/<model>-seed<seed>/result.json`` (``export/protocol.py``);
``runs/`` is not tracked, so its copy, ``records/runs/<model>-seed<seed>.json``
(``artefacts.RECORDS_DIR``), is what the sweep and the evidence read. A run
still in ``runs/`` is read from there first: it is the newest, and a fresh
retrain (``make models``) must not be mixed with older records.

    python -m export.run_records record NAME [--runs runs] [--records DIR]  # one run, NAME = <model>-seed<seed>
    python -m export.run_records collect [--runs runs] [--records DIR]      # every finished run
    python -m export.run_records extra-runs                                 # the extra seeds' run names
    python -m export.run_records from-evidence [--records DIR]              # the runs the evidence embeds

``record`` is what ``make extra-seeds`` runs after each training run;
``from-evidence`` wrote the first records, of the runs trained before the
folder existed, from ``evidence.json`` (``runs``) and ``head_sweep.json``
(which keep every measured field of a run, all but when it started and ended).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import atomic
from .artefacts import RECORDS_DIR, Artefacts, run_dir, run_record
from .train import RunResult


def _load(path: Path) -> RunResult:
    try:
        return RunResult(**json.loads(path.read_text()))
    except (json.JSONDecodeError, TypeError) as exc:
        raise ValueError(
            f"{path} is not a finished run's result ({exc}); delete it and retrain that run"
        ) from None


def find(
    name: str, seed: int, records: Path = RECORDS_DIR, runs: Path | None = None
) -> Path | None:
    """Where the run's result is: its run folder's result.json, else its record, else None."""
    if runs is not None and (run_dir(runs, name, seed) / "result.json").is_file():
        return run_dir(runs, name, seed) / "result.json"
    path = run_record(records, name, seed)
    return path if path.is_file() else None


def read(
    models: list[str],
    seeds: tuple[int, ...] | list[int],
    records: Path = RECORDS_DIR,
    runs: Path | None = None,
) -> list[RunResult]:
    """Every model x seed, seed by seed (the protocol's order); refused in words when one is missing."""
    out = []
    for seed in seeds:
        for name in models:
            path = find(name, seed, records, runs)
            if path is None:
                raise ValueError(
                    f"{run_record(records, name, seed)} is missing: train the run and copy its record "
                    f"(make run-{name}-seed{seed}, then python -m export.run_records collect)"
                )
            out.append(_load(path))
    return out


def read_optional(
    models: list[str],
    seeds: tuple[int, ...] | list[int],
    like: RunResult,
    records: Path = RECORDS_DIR,
    runs: Path | None = None,
) -> list[RunResult]:
    """The runs of ``seeds`` that exist and were trained like ``like`` (same data, same settings).

    The extra seeds train over several sessions, so any of them may be missing; one trained with
    other settings (a tiny test protocol beside the real records) is left out.
    """
    out = []
    for seed in seeds:
        for name in models:
            path = find(name, seed, records, runs)
            if path is not None:
                result = _load(path)
                if result.key == like.key:
                    out.append(result)
    return out


def record_of(result: dict) -> dict:
    """A record is the run's result.json as it is (when it started and ended included, where known)."""
    RunResult(**result)  # refuses anything that is not a run's result
    return result


def write(records: Path, result: dict) -> Path:
    return atomic.write_json(
        run_record(records, result["model"], result["seed"]), record_of(result)
    )


def collect(runs: Path, records: Path = RECORDS_DIR, log=print) -> list[Path]:
    """Copy every finished run's result.json in ``runs`` into ``records`` (unchanged ones are left alone)."""
    written = []
    for path in sorted(Path(runs).glob("*-seed*/result.json")):
        result = json.loads(path.read_text())
        target = run_record(records, result["model"], result["seed"])
        if target.is_file() and json.loads(target.read_text()) == result:
            continue
        written.append(write(records, result))
        log(f"recorded {path} -> {target}")
    return written


def record_one(runs: Path, name: str, records: Path = RECORDS_DIR, log=print) -> Path:
    """Copy one finished run (``<model>-seed<seed>``) into ``records``."""
    path = Path(runs) / name / "result.json"
    if not path.is_file():
        raise ValueError(
            f"{path} is missing: the run {name} has not finished (make run-{name})"
        )
    target = write(records, json.loads(path.read_text()))
    log(f"recorded {path} -> {target}")
    return target


def extra_runs() -> list[str]:
    """The declared extra seeds' runs, seed by seed, four heads first (the reference of every comparison),
    then the others from the fewest heads; the MLP last (no head count to compare)."""
    from .defaults import EXTRA_SEEDS
    from .models import MODELS, most_heads_model

    ref = most_heads_model().name
    attention = sorted(
        (m for m in MODELS if m.kind == "attention" and m.name != ref),
        key=lambda m: m.heads,
    )
    order = [
        ref,
        *(m.name for m in attention),
        *(m.name for m in MODELS if m.kind != "attention"),
    ]
    return [run_dir("", name, seed).name for seed in EXTRA_SEEDS for name in order]


def from_evidence(out: Path, records: Path = RECORDS_DIR, log=print) -> list[Path]:
    """The records of every run the evidence embeds: its ``runs`` and the sweep's per-model runs.

    A run in both (one head and four heads) must be the same there; the
    evidence's and the sweep's copies were made from one result.json.
    """
    evidence = json.loads(Artefacts(out).evidence.read_text())
    runs = list(evidence["runs"])
    for model in evidence.get("head_sweep", {}).get("models", []):
        runs += model["runs"]
    by_key: dict[tuple[str, int], dict] = {}
    for r in runs:
        key = (r["model"], r["seed"])
        if key in by_key and by_key[key] != r:
            raise ValueError(
                f"{key[0]} seed {key[1]} differs between the evidence's runs and its head sweep"
            )
        by_key[key] = r
    paths = [write(records, r) for r in by_key.values()]
    log(f"wrote {len(paths)} records into {records}")
    return paths


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m export.run_records",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser(
        "collect", help="copy every finished run's result.json into the records folder"
    )
    p.add_argument("--runs", default="runs")
    p.add_argument("--records", default=str(RECORDS_DIR))
    p = sub.add_parser(
        "record", help="copy one finished run's result.json into the records folder"
    )
    p.add_argument(
        "name", help="<model>-seed<seed>, e.g. <model>-seed65 with a registry name"
    )
    p.add_argument("--runs", default="runs")
    p.add_argument("--records", default=str(RECORDS_DIR))
    sub.add_parser(
        "extra-runs",
        help="print the extra seeds' run names, for one Make target per run",
    )
    p = sub.add_parser(
        "from-evidence", help="write the records of the runs that evidence.json embeds"
    )
    p.add_argument("--out", default="wasm_assets", help="folder with evidence.json")
    p.add_argument("--records", default=str(RECORDS_DIR))
    args = parser.parse_args(argv)
    try:
        if args.command == "collect":
            collect(Path(args.runs), Path(args.records))
        elif args.command == "record":
            record_one(Path(args.runs), args.name, Path(args.records))
        elif args.command == "extra-runs":
            print(" ".join(extra_runs()))
        else:
            from_evidence(Path(args.out), Path(args.records))
    except (ValueError, FileNotFoundError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
