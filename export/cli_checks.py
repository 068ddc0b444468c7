"""Checks of ``python -m export``'s options that need more than one option's text.

``check(args)`` runs right after parsing, before any folder or file is made:
each problem is one line on stderr naming the option or file and what to do,
and exit status 2, so a refused command leaves nothing behind. Kept apart from
``__main__`` (which only wires the parser) so each rule has one home.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
import tempfile
import zipfile
from pathlib import Path

from .artefacts import Artefacts
from .defaults import MAX_CONTEXT, MIN_TEMPERATURE

MAX_SEED = 2**63 - 1  # torch.manual_seed takes a signed 64-bit integer


class Refused(Exception):
    """A command that must not start; the message is the one line to print."""


def check_runs_folder(runs: Path) -> None:
    """A --runs path must be a folder or not exist yet (nor sit under a file)."""
    for folder in (Path(runs), *Path(runs).parents):
        if folder.exists():
            if not folder.is_dir():
                raise ValueError(
                    f"{folder} is a file, so {runs} cannot be the runs folder; choose another --runs"
                )
            return


def check_out(args) -> None:
    """``--runs`` and ``--out`` are folders, or nothing yet, and not under a file."""
    for option in ("runs", "out"):
        if getattr(args, option, None) is not None:
            check_runs_folder(Path(getattr(args, option)))


def temperature(value: float, text: str) -> float:
    """argparse: 0 (greedy) or at least MIN_TEMPERATURE, the same rule as the browser's."""
    if 0 < value < MIN_TEMPERATURE:
        raise argparse.ArgumentTypeError(
            f"{text} is below the smallest temperature, {MIN_TEMPERATURE}: use 0 for greedy or at least {MIN_TEMPERATURE}"
        )
    return value


def _threads(args) -> None:
    threads, cores = getattr(args, "threads", 0), os.cpu_count() or 1
    if threads and threads > cores:
        raise Refused(
            f"--threads {threads} is more than this machine's {cores} CPU cores: "
            f"use at most {cores} (or 0 for torch's default)"
        )


def _data(args) -> None:
    data = getattr(args, "data", None)
    if data is None:
        return
    if getattr(args, "from_hub", False):
        raise Refused(
            f"--from-hub downloads the stories itself, so --data {data} would be ignored: give one of the two"
        )
    path = Path(data)
    if path.is_dir():
        raise Refused(
            f"--data {data} is a folder, not a stories file: pass the TinyStories-train.txt "
            "or JSON Lines file inside it"
        )
    if path.exists() and not stat.S_ISREG(path.stat().st_mode):
        raise Refused(
            f"--data {data} is not a regular file (a named pipe or device cannot be read twice): "
            "save the stories to a file and pass that"
        )


def _seeds(args) -> None:
    for option, seeds in (
        ("--seeds", getattr(args, "seeds", ())),
        ("--seed", (getattr(args, "seed", 0),)),
    ):
        for seed in seeds or ():
            if not 0 <= seed <= MAX_SEED:
                raise Refused(
                    f"{option} {seed} does not fit in 64 bits: use whole numbers from 0 to {MAX_SEED}"
                )


def _context(args) -> None:
    context = getattr(args, "context", None)
    if context is not None and context > MAX_CONTEXT:
        raise Refused(
            f"--context {context} is longer than the pipeline supports ({MAX_CONTEXT}): "
            f"the windows would not fit in memory; use at most {MAX_CONTEXT}"
        )


def _writable(option: str, folder: str | None) -> None:
    """The folder, or the nearest existing folder above it, takes a new file."""
    if folder is None:
        return
    for existing in (Path(folder), *Path(folder).absolute().parents):
        if existing.exists():
            break
    if not existing.is_dir():
        return  # a file in the way: check_runs_folder says so
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        raise Refused(
            f"{option} {folder} cannot be written ({exc.strerror or exc}): "
            "choose a folder you may write to"
        ) from None


def _json_inputs(args) -> None:
    """The JSON files this command reads, when they exist, must parse: a truncated one is named."""
    out = getattr(args, "out", None)
    paths = []
    if out is not None and args.command in ("heads", "walkthrough", "manifest"):
        assets = Artefacts(Path(out))
        paths += [assets.evidence] if args.command != "manifest" else []
        paths += [assets.vocab]
    if args.command == "generate":
        paths.append(Path(args.vocab))
    for path in paths:
        if not path.is_file():
            continue
        try:
            json.loads(path.read_bytes())
        except (ValueError, UnicodeDecodeError) as exc:
            raise Refused(
                f"{path} is not valid JSON ({exc}): it is truncated or damaged; write it again "
                "with the stage that makes it (python -m export --help)"
            ) from None


def _checkpoint(args) -> None:
    path = getattr(args, "checkpoint", None)
    if (
        args.command == "generate"
        and path
        and Path(path).is_file()
        and not zipfile.is_zipfile(path)
    ):
        raise Refused(
            f"checkpoint {path} is not a PyTorch checkpoint (torch.save writes a zip archive): "
            "give a best.pt from runs/ or a file from wasm_assets/checkpoints/"
        )


def check(args) -> None:
    """Refuse, with one line and exit status 2, what would fail later or leave something half-made."""
    try:
        for rule in (_threads, _data, _seeds, _context, _json_inputs, _checkpoint):
            rule(args)
        for option in ("runs", "out"):
            if args.command not in ("generate", "unicode"):
                _writable(f"--{option}", getattr(args, option, None))
    except Refused as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
