"""One entry point for the pipeline: ``python -m export <command>``.

    audit     read the stories, split them, build the vocabulary, print the audit
    train     run the protocol (models x seeds), resumable, results in --runs
    evidence  write evidence.json (+ vocabulary, test vectors, trace plot) from finished runs
    generate  continue a prompt with a trained checkpoint
    onnx      export the seed-11 checkpoints to ONNX and check parity
              (--from-checkpoints: rebuild them from the shipped compact checkpoints)
    heads     measure each head: knock-out perplexities and the head atlas (heads.json)
    walkthrough  write walkthrough.json: the lesson's B = 2 batch through the shipped four-head model
    all       train, evidence, onnx, walkthrough and the page-2 worksheet: stories -> wasm_assets/
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .data import DATA_ENV, DEFAULT_STORIES, DataError, download_from_hub, load_stories
from .models import MODEL_NAMES
from .windows import SplitError


def _seeds(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(s) for s in text.split(",") if s.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"seeds must be comma-separated integers, not {text!r}") from None


def _models(text: str) -> tuple[str, ...]:
    names = tuple(s.strip() for s in text.split(",") if s.strip())
    bad = [n for n in names if n not in MODEL_NAMES]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown model(s) {', '.join(bad)}; choose from {', '.join(MODEL_NAMES)}")
    return names


def _add_data_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", help=f"stories file (TinyStories-train.txt format or JSON Lines); default ${DATA_ENV} "
                                  "or ../shared/data/tinystories/TinyStories-train-head.txt")
    p.add_argument("--stories", type=int, default=DEFAULT_STORIES, help="use the first N stories (default 6000)")
    p.add_argument("--from-hub", action="store_true", help="download the first N stories from the dataset hub first")
    p.add_argument("--revision", default=None, help="hub revision (commit) to download with --from-hub")
    p.add_argument("--vocab-size", type=int, default=4000)
    p.add_argument("--context", type=int, default=64, help="T, the window length")


def _add_train_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runs", default="runs", help="folder for finished runs (resumable)")
    p.add_argument("--updates", type=int, default=6000)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--seeds", type=_seeds, default=(11, 29, 47))
    p.add_argument("--models", type=_models, default=MODEL_NAMES)
    p.add_argument("--eval-every", type=int, default=200)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
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


def cmd_train(args):
    import torch

    from .train import run_protocol

    if args.threads:
        torch.set_num_threads(args.threads)
    corpus = _load_corpus(args)
    cfg = _train_config(args)
    results = run_protocol(corpus, cfg, Path(args.runs), progress=not args.no_progress)
    return corpus, cfg, results


def cmd_evidence(args, corpus=None, cfg=None, results=None) -> None:
    from .evidence import write_all

    if corpus is None:
        corpus, cfg, results = cmd_train(args)  # finished runs are reused, so this only trains what is missing
    write_all(corpus, cfg, results, Path(args.runs), Path(args.out), timing_note=args.timing_note)


def cmd_onnx(args) -> None:
    if getattr(args, "from_checkpoints", None):
        from .onnx_export import reexport

        reexport(Path(args.from_checkpoints), Path(args.out), data=args.data)
        return
    from .onnx_export import export_all

    export_all(Path(args.runs), Path(args.out), data=args.data, stories=args.stories)


def cmd_heads(args) -> None:
    from .heads import write

    out = Path(args.out)
    write(Path(getattr(args, "checkpoints", None) or out / "checkpoints"), out, data=args.data)


def cmd_walkthrough(args) -> None:
    from .lesson.walkthrough import write

    out = Path(args.out)
    write(Path(getattr(args, "checkpoints", None) or out / "checkpoints"), out)


def cmd_all(args) -> None:
    corpus, cfg, results = cmd_train(args)
    cmd_evidence(args, corpus, cfg, results)
    cmd_onnx(args)
    cmd_heads(args)
    cmd_walkthrough(args)
    from .lesson import worksheet

    print(f"wrote {worksheet.write(Path(args.out) / 'worksheet.json')}")


def cmd_generate(args) -> None:
    from .generate import generate_text
    from .train import load_checkpoint

    model = load_checkpoint(args.checkpoint)
    vocab = json.loads(Path(args.vocab).read_text())
    out = generate_text(model, vocab["itos"], args.prompt, max_new_tokens=args.max_new_tokens,
                        temperature=args.temperature, seed=args.seed)
    print(out["text"])


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m export", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("audit", help="split and audit the stories")
    _add_data_args(p)
    p.set_defaults(func=cmd_audit)
    for name, func, helptext in (("train", cmd_train, "run the training protocol"),
                                 ("evidence", cmd_evidence, "write evidence.json and friends"),
                                 ("all", cmd_all, "train, write evidence and export ONNX")):
        p = sub.add_parser(name, help=helptext)
        _add_data_args(p)
        _add_train_args(p)
        p.add_argument("--out", default="wasm_assets")
        p.set_defaults(func=func)
    p = sub.add_parser("onnx", help="export seed-11 checkpoints to ONNX")
    _add_data_args(p)
    p.add_argument("--runs", default="runs")
    p.add_argument("--out", default="wasm_assets")
    p.add_argument("--from-checkpoints", metavar="DIR", default=None,
                   help="rebuild the ONNX files from the compact checkpoints in DIR (e.g. wasm_assets/checkpoints) "
                        "instead of the training runs")
    p.set_defaults(func=cmd_onnx)
    p = sub.add_parser("heads", help="knock-out perplexities and the head atlas of the shipped attention models")
    _add_data_args(p)
    p.add_argument("--out", default="wasm_assets", help="folder with evidence.json; heads.json and the atlas go here")
    p.add_argument("--checkpoints", default=None, help="folder with the compact seed-11 checkpoints "
                                                        "(default OUT/checkpoints)")
    p.set_defaults(func=cmd_heads)
    p = sub.add_parser("walkthrough", help="write walkthrough.json from the shipped four-head checkpoint")
    p.add_argument("--out", default="wasm_assets", help="folder with vocab.json and evidence.json; output goes here")
    p.add_argument("--checkpoints", default=None, help="folder with four_heads-seed11.pt (default OUT/checkpoints)")
    p.set_defaults(func=cmd_walkthrough)
    p = sub.add_parser("generate", help="continue a prompt with a checkpoint")
    p.add_argument("checkpoint")
    p.add_argument("prompt")
    p.add_argument("--vocab", default="wasm_assets/vocab.json")
    p.add_argument("--max-new-tokens", type=int, default=24)
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_generate)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except (DataError, SplitError, ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
