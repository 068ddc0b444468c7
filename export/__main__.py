"""One entry point for the pipeline: ``python -m export <command>``.

Each stage of the graph (export/stages.py; `python -m export stages` prints it)
is a command that reruns it alone; `all` runs every stage in order, stories ->
wasm_assets/, and `run STAGE...` the named ones. The commands below list the
stages first, in the order `all` runs them, then the other commands. Each
stage writes its own files once; a bad option stops with one line on stderr
and exit status 2 before anything is written.
"""

from __future__ import annotations

import argparse
import sys

from . import cli_checks, options, stages
from .data import DataError
from .windows import SplitError

# The commands that are not a stage: (name, help, options, "module:function").
COMMANDS = (
    (
        "audit",
        "split and audit the stories",
        options.data,
        "export.corpus:audit_command",
    ),
    (
        "run",
        "the named stages of the graph, in the order given",
        stages.named_stages,
        "export.stages:command",
    ),
    (
        "all",
        "the whole pipeline, stories to wasm_assets/",
        options.protocol_timed,
        "export.stages:command",
    ),
    (
        "stages",
        "print the stage graph: each stage's inputs and output",
        options.nothing,
        "export.stages:print_graph",
    ),
    (
        "runs",
        "print the training runs' names (model-seedS), for one Make target per run",
        options.run_names,
        "export.protocol:runs_command",
    ),
    (
        "manifest",
        "write models/manifest.json from the shipped models and checkpoints",
        options.shipped,
        "export.onnx_export:manifest_command",
    ),
    (
        "steps",
        "write page 4's teaching graphs (every tensor of forward_full) and the manifest",
        options.shipped,
        "export.onnx_export:steps_command",
    ),
    (
        "generate",
        "continue a prompt with a checkpoint (full or compact)",
        options.generate,
        "export.generate:command",
    ),
    (
        "unicode",
        "write site_src/js/runtime/unicode_unassigned.js from this Python's Unicode",
        options.unicode,
        "export.wordlm:unicode_command",
    ),
)


def build_parser() -> argparse.ArgumentParser:
    parser = options.Parser(
        prog="python -m export",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    stage_commands = [
        (s.name, s.summary, s.options, s.command or "export.stages:command")
        for s in stages.GRAPH
    ]
    for name, helptext, add_options, func in [*stage_commands, *COMMANDS]:
        p = sub.add_parser(name, help=helptext)
        add_options(p)
        p.set_defaults(func=func)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    # before anything is made: one line and exit 2 for options that cannot work
    cli_checks.check(args)
    try:
        stages.load(args.func)(args)
    except (
        DataError,
        SplitError,
        ValueError,
        FileNotFoundError,
        NotADirectoryError,
        IsADirectoryError,
    ) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
