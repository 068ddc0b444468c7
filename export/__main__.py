"""One entry point for the pipeline: ``python -m export <command>``.

The stages of the graph (export/stages.py; `python -m export stages` prints it),
in the order `all` runs them; each is also a command that reruns it alone:

    palette   write palette.css: the head and model colours (export/palette.py, the registry)
    vocab     write vocab.json and the tokenizer test vectors
    train     the protocol (models x seeds), resumable, in --runs; one run: --models M --seeds S
    onnx      export the seed-11 checkpoints to ONNX, check parity, write the manifest
              (--from-checkpoints DIR: rebuild them from the shipped compact checkpoints)
    measure   every figure measured from the runs and the ONNX report -> runs/measurements.json
    sweep     the head-count sweep: every attention model's runs (1, 2, 4, 8, 16 heads) -> head_sweep.json
    heads     measure each head: knock-out perplexities and the head atlas (heads.json)
    walkthrough  write walkthrough.json: the lesson's B = 2 batch through the shipped four-head model
    worksheet, subwords   page 2's worksheet, page 3's byte-pair encoder
    evidence  assemble evidence.json (and the trace plot) from the measurements and the stage files
    toy_task  page 5: tiny 1/2/4-head models on the task one head cannot learn -> toy_task.json
              (options: --steps, --seeds, --tasks, --workers)
    head_growth  page 5: rerun the four-head seed-11 run with snapshots, measure each -> head_growth.json
    pagedata  write page_data.json: the figures' and tables' computed data (the site build only renders)
    all       every stage above, in order: stories -> wasm_assets/
    run STAGE...  the named stages, in the order given

Other commands: audit (print the split and audit), manifest (rewrite models/manifest.json),
steps (rewrite page 4's teaching graphs, which onnx also writes, and the manifest),
generate (continue a prompt with a checkpoint), unicode (the browser tokenizer's table of
unassigned code points), stages (print the graph), runs (the run names, for Make).

Each stage writes its own files once; a bad option stops with one line on
stderr and exit status 2 before anything is written.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from .data import DATA_ENV, DEFAULT_STORIES, DataError, download_from_hub, load_stories
from .defaults import CONTEXT, PRESET_MAX_NEW, VOCAB_SIZE
from .models import MODEL_NAMES
from .windows import SplitError
from . import cli_checks


class _Parser(argparse.ArgumentParser):
    """A bad option is one line on stderr (what is wrong, where to look) and exit status 2."""

    def error(self, message: str):
        self.exit(2, f"error: {message} (see `{self.prog} --help`)\n")


def _at_least(low: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, not {value}")
        return value
    return parse


def _temperature(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number, 0 (greedy) or more, not {text}")
    return cli_checks.temperature(value, text)


def _seeds(text: str) -> tuple[int, ...]:
    try:
        seeds = tuple(int(s) for s in text.split(",") if s.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"seeds must be comma-separated integers, not {text!r}") from None
    if not seeds:
        raise argparse.ArgumentTypeError("give at least one seed, e.g. --seeds 11,29,47")
    return seeds


def _models(text: str) -> tuple[str, ...]:
    names = tuple(s.strip() for s in text.split(",") if s.strip())
    bad = [n for n in names if n not in MODEL_NAMES]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown model(s) {', '.join(bad)}; choose from {', '.join(MODEL_NAMES)}")
    if not names:
        raise argparse.ArgumentTypeError(f"give at least one model of {', '.join(MODEL_NAMES)}")
    return names


def _add_data_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", help=f"stories file (TinyStories-train.txt format or JSON Lines); default ${DATA_ENV} "
                                  "or ../shared/data/tinystories/TinyStories-train-head.txt")
    p.add_argument("--stories", type=_at_least(3), default=DEFAULT_STORIES,
                   help=f"use the first N stories (default {DEFAULT_STORIES})")
    p.add_argument("--from-hub", action="store_true", help="download the first N stories from the dataset hub first")
    p.add_argument("--revision", default=None, help="hub revision (commit) to download with --from-hub")
    p.add_argument("--vocab-size", type=_at_least(5), default=VOCAB_SIZE, help="C, four special tokens included")
    p.add_argument("--context", type=_at_least(1), default=CONTEXT, help="T, the window length")


def _add_train_args(p: argparse.ArgumentParser) -> None:
    from .train import TrainConfig

    default = TrainConfig()  # the CLI's defaults are the config's, never retyped
    p.add_argument("--runs", default="runs", help="folder for finished runs (resumable)")
    p.add_argument("--updates", type=_at_least(1), default=default.updates)
    p.add_argument("--batch-size", type=_at_least(1), default=default.batch_size)
    p.add_argument("--seeds", type=_seeds, default=default.seeds)
    p.add_argument("--models", type=_models, default=default.models)
    p.add_argument("--eval-every", type=_at_least(1), default=default.eval_every)
    p.add_argument("--threads", type=_at_least(0), default=0, help="torch threads (0: torch's default)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda", "mps"), default="auto",
                   help="where to train: auto (the default) takes CUDA, then Apple's MPS, then the CPU")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--timing-note", default="", help="conditions the training times ran in, kept in the evidence")


def _load_corpus(args):
    from .corpus import prepare_corpus

    path = args.data
    if args.from_hub:
        from .data import HUB_REVISION

        dest = Path(args.runs if hasattr(args, "runs") else "runs") / "TinyStories-train-hub.txt"
        path, commit = download_from_hub(dest, args.stories, args.revision or HUB_REVISION)
        print(f"downloaded {args.stories} stories at revision {commit} to {path}")
    source = load_stories(path, args.stories)
    if args.from_hub:
        source = type(source)(**{**source.__dict__, "revision": commit})
    return prepare_corpus(source, C=args.vocab_size, T=args.context)


def _train_config(args):
    from .train import TrainConfig

    return TrainConfig(updates=args.updates, batch_size=args.batch_size, seeds=args.seeds, models=args.models,
                       eval_every=min(args.eval_every, args.updates))


def cmd_audit(args) -> None:
    corpus = _load_corpus(args)
    print(json.dumps({"source": corpus.source.describe(), "vocabulary": len(corpus.vocab), "audit": corpus.audit},
                     indent=2))


def _check_out(args) -> None:
    from .protocol import check_runs_folder

    for option in ("runs", "out"):
        if getattr(args, option, None) is not None:
            check_runs_folder(Path(getattr(args, option)))  # a folder, or nothing yet, not under a file


def cmd_vocab(args, corpus=None) -> None:
    from .evidence import write_vocabulary

    _check_out(args)
    write_vocabulary(corpus or _load_corpus(args), Path(args.out))


def cmd_train(args, corpus=None):
    import torch

    from .device import resolve_device
    from .protocol import run_protocol

    _check_out(args)
    cfg = _train_config(args)
    device = resolve_device(args.device)
    if args.threads:
        torch.set_num_threads(args.threads)
    corpus = corpus or _load_corpus(args)
    print(f"training on {device.type}")
    results = run_protocol(corpus, cfg, Path(args.runs), progress=not args.no_progress, device=device)
    return corpus, cfg, results


def cmd_stage(args) -> None:
    from . import stages

    stages.run(args.stage_names if args.command == "run" else [args.command], args)


def cmd_onnx(args, corpus=None) -> dict:
    if getattr(args, "from_checkpoints", None):
        from .onnx_export import reexport

        _check_out(args)
        return reexport(Path(args.from_checkpoints), Path(args.out), data=args.data, runs=Path(args.runs))
    from .onnx_export import export_all

    _check_out(args)
    return export_all(corpus or _load_corpus(args), Path(args.runs), Path(args.out))


def cmd_manifest(args) -> None:
    from .onnx_export import write_manifest

    print(f"wrote {write_manifest(Path(args.out))}")


def cmd_steps(args) -> None:
    from .onnx_export import write_manifest
    from .teaching_graph import write_all

    write_all(Path(args.out))
    print(f"wrote {write_manifest(Path(args.out))}")


def cmd_unicode(args) -> None:
    from . import atomic
    from .wordlm import UNICODE_TABLE, UNICODE_VERSION, unicode_table_js

    path = atomic.write_text(Path(args.root) / UNICODE_TABLE, unicode_table_js())
    print(f"wrote {path} (Unicode {UNICODE_VERSION})")


def cmd_all(args) -> None:
    from .stages import run_all

    run_all(args)


def cmd_stages(args) -> None:
    from .stages import describe

    print(describe())


def cmd_runs(args) -> None:
    """One name per run (``<model>-seed<seed>``), for one Make target per run."""
    from .artefacts import run_dir

    print(" ".join(run_dir("", m, s).name for s in args.seeds for m in args.models))


def cmd_generate(args) -> None:
    from .checkpoints import check_vocabulary, load_checkpoint
    from .generate import generate_text

    model = load_checkpoint(args.checkpoint)
    if not Path(args.vocab).is_file():
        raise FileNotFoundError(f"{args.vocab} not found: pass --vocab PATH, the vocab.json written with this checkpoint")
    try:
        vocab = json.loads(Path(args.vocab).read_text())
        itos = vocab["itos"]
    except (json.JSONDecodeError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{args.vocab} is not a vocab.json ({type(exc).__name__}: {exc})") from None
    check_vocabulary(model, itos, args.vocab)
    out = generate_text(model, itos, args.prompt, max_new_tokens=args.max_new_tokens,
                        temperature=args.temperature, seed=args.seed)
    print(out["text"])


def cmd_toy_task(args) -> None:
    from .toy_task import ToyConfig, build

    _check_out(args)
    cfg = ToyConfig(**{k: v for k, v in (("steps", args.steps), ("seeds", args.seeds), ("tasks", args.tasks))
                       if v is not None})
    build(Path(args.out), cfg, workers=args.workers)


def _add_toy_task_command(sub) -> None:
    """Issue 20: the synthetic task one head cannot learn and two can (export/toy_task.py)."""
    from .toy_task import TASKS

    def tasks(text: str) -> tuple[str, ...]:
        names = tuple(t.strip() for t in text.split(",") if t.strip())
        bad = [n for n in names if n not in TASKS]
        if bad or not names:
            raise argparse.ArgumentTypeError(f"choose toy tasks from {', '.join(TASKS)}, not {text!r}")
        return names

    p = sub.add_parser("toy_task", help="train tiny 1/2/4-head models on the synthetic two-source task -> toy_task.json")
    p.add_argument("--out", default="wasm_assets")
    p.add_argument("--steps", type=_at_least(1), default=None, help="updates per run (default: the stage's)")
    p.add_argument("--seeds", type=_seeds, default=None, help="evaluation seeds (default 1,2,3)")
    p.add_argument("--tasks", type=tasks, default=None, help=f"comma-separated subset of {', '.join(TASKS)}")
    p.add_argument("--workers", type=_at_least(1), default=1, help="processes, one task each (same numbers)")
    p.set_defaults(func=cmd_toy_task)


def cmd_head_growth(args) -> None:
    from .head_growth import build

    _check_out(args)
    build(Path(args.out), runs=Path(args.runs), data=args.data)


def _add_head_growth_command(sub) -> None:
    """Issue 20: heads forming during training (export/head_growth.py)."""
    p = sub.add_parser("head_growth", help="rerun the four-head seed-11 training with snapshots (resumable) and "
                                           "measure each -> head_growth.json")
    p.add_argument("--out", default="wasm_assets", help="folder with evidence.json; head_growth.json goes here")
    p.add_argument("--runs", default="runs", help="the rerun's snapshots go to RUNS/head-growth/")
    p.add_argument("--data", default=None, help="the stories file evidence.json was made from (default as train)")
    p.set_defaults(func=cmd_head_growth)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m export", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("audit", help="split and audit the stories")
    _add_data_args(p)
    p.set_defaults(func=cmd_audit)
    p = sub.add_parser("vocab", help="write vocab.json and the tokenizer test vectors")
    _add_data_args(p)
    p.add_argument("--out", default="wasm_assets")
    p.set_defaults(func=cmd_vocab)
    for name, func, helptext in (("train", cmd_train, "run the training protocol"),
                                 ("evidence", cmd_stage, "assemble evidence.json and the trace plot, last"),
                                 ("measure", cmd_stage, "every figure measured from the runs: runs/measurements.json"),
                                 ("tokenizer_vectors", cmd_stage, "the browser tokenizer's test vectors"),
                                 ("worksheet", cmd_stage, "page 2's worksheet.json"),
                                 ("subwords", cmd_stage, "page 3's subwords.json"),
                                 ("example_search", cmd_stage, "page 1's sentence, chosen with the four-head model"),
                                 ("palette", cmd_stage, "palette.css: the head and model colours for the site"),
                                 ("sweep", cmd_stage, "head_sweep.json: the head-count sweep from finished runs"),
                                 ("pagedata", cmd_stage, "page_data.json: what the pages draw that is computed"),
                                 ("run", cmd_stage, "the named stages of the graph, in the order given"),
                                 ("all", cmd_all, "the whole pipeline, stories to wasm_assets/")):
        p = sub.add_parser(name, help=helptext)
        if name == "run":
            from .stages import STAGES

            p.add_argument("stage_names", nargs="+", choices=list(STAGES), metavar="STAGE",
                           help=f"one or more of: {', '.join(STAGES)}")
        if name in ("sweep", "all", "run"):
            p.add_argument("--time-updates", action="store_true",
                           help="sweep: also time one training update per model on one thread (an idle machine)")
        _add_data_args(p)
        _add_train_args(p)
        p.add_argument("--out", default="wasm_assets")
        p.add_argument("--checkpoints", default=None, help="folder with the compact seed-11 checkpoints "
                                                            "(default OUT/checkpoints)")
        p.set_defaults(func=func)
    p = sub.add_parser("stages", help="print the stage graph: each stage's inputs and output")
    p.set_defaults(func=cmd_stages)
    p = sub.add_parser("runs", help="print the training runs' names (model-seedS), for one Make target per run")
    _add_data_args(p)  # takes the protocol's options (so Make passes the same ones), reads only --seeds, --models
    _add_train_args(p)
    p.set_defaults(func=cmd_runs)
    p = sub.add_parser("onnx", help="export seed-11 checkpoints to ONNX and write the manifest")
    _add_data_args(p)
    p.add_argument("--runs", default="runs")
    p.add_argument("--out", default="wasm_assets")
    p.add_argument("--from-checkpoints", metavar="DIR", default=None,
                   help="rebuild the ONNX files from the compact checkpoints in DIR (e.g. wasm_assets/checkpoints) "
                        "instead of the training runs")
    p.set_defaults(func=cmd_onnx)
    p = sub.add_parser("manifest", help="write models/manifest.json from the shipped models and checkpoints")
    p.add_argument("--out", default="wasm_assets", help="folder with models/, checkpoints/ and vocab.json")
    p.set_defaults(func=cmd_manifest)
    p = sub.add_parser("steps", help="write page 4's teaching graphs (every tensor of forward_full) and the manifest")
    p.add_argument("--out", default="wasm_assets", help="folder with models/, checkpoints/ and vocab.json")
    p.set_defaults(func=cmd_steps)
    p = sub.add_parser("heads", help="knock-out perplexities and the head atlas of the shipped attention models")
    _add_data_args(p)
    p.add_argument("--out", default="wasm_assets", help="folder with evidence.json; heads.json and the atlas go here")
    p.add_argument("--runs", default="runs", help="runs folder with measurements.json (else OUT/evidence.json)")
    p.add_argument("--checkpoints", default=None, help="folder with the compact seed-11 checkpoints "
                                                        "(default OUT/checkpoints)")
    p.set_defaults(func=cmd_stage)
    p = sub.add_parser("walkthrough", help="write walkthrough.json from the shipped four-head checkpoint")
    p.add_argument("--out", default="wasm_assets", help="folder with vocab.json and evidence.json; output goes here")
    p.add_argument("--runs", default="runs", help="runs folder with measurements.json (else OUT/evidence.json)")
    p.add_argument("--checkpoints", default=None, help="folder with the compact seed-11 checkpoints (default OUT/checkpoints)")
    p.set_defaults(func=cmd_stage)
    p = sub.add_parser("generate", help="continue a prompt with a checkpoint (full or compact)")
    p.add_argument("checkpoint")
    p.add_argument("prompt")
    p.add_argument("--vocab", default="wasm_assets/vocab.json")
    p.add_argument("--max-new-tokens", type=_at_least(1), default=PRESET_MAX_NEW)
    p.add_argument("--temperature", type=_temperature, default=0.0, help="0 (the default) is greedy")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_generate)
    p = sub.add_parser("unicode", help="write site_src/js/runtime/unicode_unassigned.js from this Python's Unicode")
    p.add_argument("--root", default=".", help="the repository root")
    p.set_defaults(func=cmd_unicode)
    _add_toy_task_command(sub)
    _add_head_growth_command(sub)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    cli_checks.check(args)  # before anything is made: one line and exit 2 for options that cannot work
    try:
        args.func(args)
    except (DataError, SplitError, ValueError, FileNotFoundError, NotADirectoryError, IsADirectoryError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
