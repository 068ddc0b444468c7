"""``python -m export.microgpt``: train microgpt on a names file and export it as JSON.

    python -m export.microgpt --names PATH --out wasm_assets/microgpt-trained.json [--steps 1000]
    python -m export.microgpt --n-head 1      # the one-head twin -> wasm_assets/microgpt-one-head.json

Without ``--names`` the list is read from ``$NAMES_PATH``, or else
``../shared/data/names/names.txt``. A missing, empty or non-UTF-8 names file
ends the program with a one-line message and exit status 2.

The JSON (``"format": "microgpt-trained/1"``), keys in this order: ``config``
(n_layer, n_embd, block_size, n_head, head_dim, steps, learning_rate, beta1,
beta2, eps, seed, temperature); ``uchars`` (position = token id); ``bos``
(``len(uchars)``); ``vocab_size``; ``weights`` (name -> list of rows of
floats; a matrix with ``out`` rows maps ``in`` numbers to ``out`` numbers);
``losses`` (one per step); ``samples`` (the 20 names microgpt.py's ``sample``
invents after training); ``source`` (file name, SHA-256, number of names,
credit). Floats are written at full precision and the output depends only on
the input file and the step count: two runs give byte-identical files.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from export.artefacts import Artefacts
from export.atomic import write_text
from export.digest import file_sha256

from . import microgpt as model
from .floats import FORMAT

CREDIT = "makemore names.txt, Andrej Karpathy, MIT"
DEFAULT_NAMES = "../shared/data/names/names.txt"


def default_out(n_head):
    """Four heads (the lesson's model) or one head (its comparison): each has its artefact."""
    files = Artefacts()
    return files.microgpt_trained if n_head == model.N_HEAD else files.microgpt_one_head


class NamesFileError(ValueError):
    """The names file cannot be used: absent, unreadable, not UTF-8, or empty."""


def read_names(path):
    """Return the non-blank lines of ``path``, stripped, in file order."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        raise NamesFileError(f"names file not found: {path}") from None
    except OSError as exc:
        raise NamesFileError(
            f"cannot read names file {path}: {exc.strerror or exc}"
        ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NamesFileError(
            f"names file {path} is not valid UTF-8 (bad byte at offset {exc.start})"
        ) from None
    # Split on \n, \r\n or \r, as a file opened in text mode would.
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    names = [line.strip() for line in lines if line.strip()]
    if not names:
        raise NamesFileError(f"names file {path} contains no names")
    return names


def _progress(total, enabled):
    """A tqdm bar on stderr if tqdm is installed, else a plain counter line."""
    if not enabled:
        return None, lambda: None
    try:
        from tqdm import tqdm
    except ImportError:

        def tick(step, loss):
            if step % 10 == 0 or step == total:
                print(
                    f"\rmicrogpt: step {step}/{total}  loss {loss:.4f}",
                    end="",
                    file=sys.stderr,
                    flush=True,
                )

        return tick, lambda: print(file=sys.stderr)
    bar = tqdm(total=total, desc="microgpt", unit="step", file=sys.stderr)

    def tick(step, loss):
        bar.set_postfix_str(f"loss {loss:.4f}", refresh=False)
        bar.update(1)

    return tick, bar.close


def build_export(
    names_path, steps=model.NUM_STEPS, progress=False, n_head=model.N_HEAD
):
    """Train on the file at ``names_path`` and return the JSON document as a dict.

    ``n_head`` changes only how attention cuts the 16 numbers: the same weights
    are drawn in the same order and the same names are seen in the same order,
    so a one-head run differs from the four-head one in nothing else.
    """
    names = read_names(names_path)
    tick, done = _progress(steps, progress)
    try:
        run = model.train(
            names, steps=steps, seed=model.SEED, on_step=tick, n_head=n_head
        )
    finally:
        done()
    samples = model.sample(
        run["state"],
        run["uchars"],
        run["rng"],
        model.NUM_SAMPLES,
        model.TEMPERATURE,
        n_head=n_head,
    )
    return {
        "format": FORMAT,
        "config": {
            "n_layer": model.N_LAYER,
            "n_embd": model.N_EMBD,
            "block_size": model.BLOCK_SIZE,
            "n_head": n_head,
            "head_dim": model.N_EMBD // n_head,
            "steps": steps,
            "learning_rate": model.LEARNING_RATE,
            "beta1": model.BETA1,
            "beta2": model.BETA2,
            "eps": model.EPS,
            "seed": model.SEED,
            "temperature": model.TEMPERATURE,
        },
        "uchars": run["uchars"],
        "bos": run["bos"],
        "vocab_size": run["bos"] + 1,
        "weights": {
            name: [[p.data for p in row] for row in mat]
            for name, mat in run["state"].items()
        },
        "losses": run["losses"],
        "samples": samples,
        "source": {
            "file": os.path.basename(names_path),
            "sha256": file_sha256(names_path),
            "count": len(names),
            "credit": CREDIT,
        },
    }


def write_json_atomic(path, obj):
    """Compact JSON at full float precision, written to a temporary file and renamed into place."""
    write_text(
        path,
        json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        + "\n",
    )


def _positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m export.microgpt",
        description="Train the pure-Python microgpt on a list of names and export it as JSON.",
    )
    parser.add_argument(
        "--names",
        default=os.environ.get("NAMES_PATH", DEFAULT_NAMES),
        help="one name per line, UTF-8 (default: $NAMES_PATH or %(default)s)",
    )
    parser.add_argument(
        "--out",
        default=None,
        help="JSON to write (default: wasm_assets/microgpt-trained.json, with --n-head 1 "
        "wasm_assets/microgpt-one-head.json)",
    )
    parser.add_argument(
        "--steps",
        type=_positive_int,
        default=model.NUM_STEPS,
        help="training steps (default: %(default)s)",
    )
    parser.add_argument(
        "--n-head",
        type=int,
        choices=(1, model.N_HEAD),
        default=model.N_HEAD,
        help="attention heads: %(default)s (the lesson's model) or 1 (one head over all "
        f"{model.N_EMBD} numbers, for the comparison)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    args.out = args.out or default_out(args.n_head)
    try:
        doc = build_export(
            args.names,
            steps=args.steps,
            progress=not args.no_progress,
            n_head=args.n_head,
        )
    except NamesFileError as exc:
        print(f"microgpt: error: {exc}", file=sys.stderr)
        return 2
    write_json_atomic(args.out, doc)
    print(
        f"microgpt: wrote {args.out} (final loss {doc['losses'][-1]:.4f}; "
        f"samples: {', '.join(doc['samples'][:5])}, ...)",
        file=sys.stderr,
    )
    return 0
