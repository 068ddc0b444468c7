"""The options ``python -m export``'s commands share, and what they load from them.

Every command's parser is built from these groups (export/__main__.py wires
them to the stage graph in export/stages.py), so an option reads the same and
is checked the same in every command: a bad value is one line on stderr and
exit status 2 (``Parser.error``). The defaults are the config's and the
artefact folder's (``export/artefacts.py``, which honours ``$MHA_WASM_ASSETS``),
never retyped here.
"""

from __future__ import annotations

import argparse
import math

from . import cli_checks
from .artefacts import assets_dir
from .data import DATA_ENV, DEFAULT_STORIES
from .defaults import CONTEXT, VOCAB_SIZE
from .models import MODEL_NAMES


class Parser(argparse.ArgumentParser):
    """A bad option is one line on stderr (what is wrong, where to look) and exit status 2."""

    def error(self, message: str):
        self.exit(2, f"error: {message} (see `{self.prog} --help`)\n")


def at_least(low: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a whole number"
            ) from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, not {value}")
        return value

    return parse


def temperature(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(
            f"must be a finite number, 0 (greedy) or more, not {text}"
        )
    return cli_checks.temperature(value, text)


def seeds(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(s) for s in text.split(",") if s.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"seeds must be comma-separated integers, not {text!r}"
        ) from None
    if not values:
        raise argparse.ArgumentTypeError(
            "give at least one seed, e.g. --seeds 11,29,47"
        )
    return values


def models(text: str) -> tuple[str, ...]:
    names = tuple(s.strip() for s in text.split(",") if s.strip())
    bad = [n for n in names if n not in MODEL_NAMES]
    if bad:
        raise argparse.ArgumentTypeError(
            f"unknown model(s) {', '.join(bad)}; choose from {', '.join(MODEL_NAMES)}"
        )
    if not names:
        raise argparse.ArgumentTypeError(
            f"give at least one model of {', '.join(MODEL_NAMES)}"
        )
    return names


def out(p: argparse.ArgumentParser, help: str | None = None) -> None:
    """``--out``: the artefact folder, by default ``export/artefacts.py``'s."""
    p.add_argument("--out", default=str(assets_dir()), help=help)


def runs(p: argparse.ArgumentParser, help: str | None = None) -> None:
    p.add_argument("--runs", default="runs", help=help)


def checkpoints(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--checkpoints",
        default=None,
        help="folder with the compact seed-11 checkpoints (default OUT/checkpoints)",
    )


def data(p: argparse.ArgumentParser) -> None:
    """The stories and the tokenizer's sizes: every command that reads the stories takes these."""
    p.add_argument(
        "--data",
        help=f"stories file (TinyStories-train.txt format or JSON Lines); default ${DATA_ENV} "
        "or ../shared/data/tinystories/TinyStories-train-head.txt",
    )
    p.add_argument(
        "--stories",
        type=at_least(3),
        default=DEFAULT_STORIES,
        help=f"use the first N stories (default {DEFAULT_STORIES})",
    )
    p.add_argument(
        "--from-hub",
        action="store_true",
        help="download the first N stories from the dataset hub first",
    )
    p.add_argument(
        "--revision",
        default=None,
        help="hub revision (commit) to download with --from-hub",
    )
    p.add_argument(
        "--vocab-size",
        type=at_least(5),
        default=VOCAB_SIZE,
        help="C, four special tokens included",
    )
    p.add_argument(
        "--context", type=at_least(1), default=CONTEXT, help="T, the window length"
    )


def training(p: argparse.ArgumentParser) -> None:
    from .train import TrainConfig

    default = TrainConfig()  # the CLI's defaults are the config's, never retyped
    runs(p, "folder for finished runs (resumable)")
    p.add_argument("--updates", type=at_least(1), default=default.updates)
    p.add_argument("--batch-size", type=at_least(1), default=default.batch_size)
    p.add_argument("--seeds", type=seeds, default=default.seeds)
    p.add_argument("--models", type=models, default=default.models)
    p.add_argument("--eval-every", type=at_least(1), default=default.eval_every)
    # In the protocol's options because `make models PROTOCOL=...` passes the same
    # options to every command; only `all` (its toy_task stage) reads it.
    p.add_argument(
        "--toy-steps",
        type=at_least(1),
        default=None,
        help="the toy task's updates per run when `all` runs it (default: the stage's own)",
    )
    p.add_argument(
        "--threads",
        type=at_least(0),
        default=0,
        help="torch threads (0: torch's default)",
    )
    p.add_argument(
        "--device",
        choices=("auto", "cpu", "cuda", "mps"),
        default="auto",
        help="where to train: auto (the default) takes CUDA, then Apple's MPS, then the CPU",
    )
    p.add_argument("--no-progress", action="store_true")
    p.add_argument(
        "--timing-note",
        default="",
        help="conditions the training times ran in, kept in the evidence",
    )


def records(p: argparse.ArgumentParser) -> None:
    """``--records``: the tracked folder of run records the sweep and the evidence read."""
    p.add_argument(
        "--records",
        default=None,
        help="the tracked folder of run records (default records/runs; "
        "a run still in --runs is read from there)",
    )


def protocol(p: argparse.ArgumentParser) -> None:
    """The whole protocol's options: what ``all`` passes to every stage, so each stage alone takes them too."""
    data(p)
    training(p)
    out(p)
    checkpoints(p)
    records(p)


def protocol_timed(p: argparse.ArgumentParser) -> None:
    """The protocol's options and the sweep's ``--time-updates``."""
    p.add_argument(
        "--time-updates",
        action="store_true",
        help="sweep: also time one training update per model on one thread (an idle machine)",
    )
    protocol(p)


def vocab(p: argparse.ArgumentParser) -> None:
    data(p)
    out(p)


def onnx(p: argparse.ArgumentParser) -> None:
    data(p)
    runs(p)
    out(p)
    p.add_argument(
        "--from-checkpoints",
        metavar="DIR",
        default=None,
        help="rebuild the ONNX files from the compact checkpoints in DIR (e.g. wasm_assets/checkpoints) "
        "instead of the training runs",
    )


RUNS_MEASURED = "runs folder with measurements.json (else OUT/evidence.json)"


def heads(p: argparse.ArgumentParser) -> None:
    data(p)
    out(p, "folder with evidence.json; heads.json and the atlas go here")
    runs(p, RUNS_MEASURED)
    checkpoints(p)


def walkthrough(p: argparse.ArgumentParser) -> None:
    out(p, "folder with vocab.json and evidence.json; output goes here")
    runs(p, RUNS_MEASURED)
    checkpoints(p)


def toy_task(p: argparse.ArgumentParser) -> None:
    from .toy_task import TASKS

    def tasks(text: str) -> tuple[str, ...]:
        names = tuple(t.strip() for t in text.split(",") if t.strip())
        bad = [n for n in names if n not in TASKS]
        if bad or not names:
            raise argparse.ArgumentTypeError(
                f"choose toy tasks from {', '.join(TASKS)}, not {text!r}"
            )
        return names

    out(p)
    p.add_argument(
        "--steps",
        type=at_least(1),
        default=None,
        help="updates per run (default: the stage's)",
    )
    p.add_argument(
        "--seeds", type=seeds, default=None, help="evaluation seeds (default 1,2,3)"
    )
    p.add_argument(
        "--tasks",
        type=tasks,
        default=None,
        help=f"comma-separated subset of {', '.join(TASKS)}",
    )
    p.add_argument(
        "--workers",
        type=at_least(1),
        default=1,
        help="processes, one task each (same numbers)",
    )


def microgpt_heads(p: argparse.ArgumentParser) -> None:
    """The names microgpt trained on (``all`` and ``run`` read ``$NAMES_PATH``) and the artefact folder."""
    p.add_argument(
        "--names",
        default=None,
        help="the names list both microgpts trained on (default $NAMES_PATH or "
        "../shared/data/names/names.txt)",
    )
    out(p)


def head_growth(p: argparse.ArgumentParser) -> None:
    out(p, "folder with evidence.json; head_growth.json goes here")
    runs(p, "the rerun's snapshots go to RUNS/head-growth/")
    p.add_argument(
        "--data",
        default=None,
        help="the stories file evidence.json was made from (default as train)",
    )


def run_names(p: argparse.ArgumentParser) -> None:
    # takes the protocol's options (so Make passes the same ones), reads only --seeds, --models
    data(p)
    training(p)


def shipped(p: argparse.ArgumentParser) -> None:
    out(p, "folder with models/, checkpoints/ and vocab.json")


def generate(p: argparse.ArgumentParser) -> None:
    from .artefacts import Artefacts
    from .defaults import PRESET_MAX_NEW

    p.add_argument("checkpoint")
    p.add_argument("prompt")
    p.add_argument("--vocab", default=str(Artefacts().vocab))
    p.add_argument("--max-new-tokens", type=at_least(1), default=PRESET_MAX_NEW)
    p.add_argument(
        "--temperature", type=temperature, default=0.0, help="0 (the default) is greedy"
    )
    p.add_argument("--seed", type=int, default=0)


def unicode(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", default=".", help="the repository root")


def nothing(p: argparse.ArgumentParser) -> None:
    pass


def train_config(args):
    from .train import TrainConfig

    return TrainConfig(
        updates=args.updates,
        batch_size=args.batch_size,
        seeds=args.seeds,
        models=args.models,
        eval_every=min(args.eval_every, args.updates),
    )
