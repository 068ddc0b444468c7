"""The pipeline as a declared graph: each stage has a name, its inputs and one output.

``python -m export all`` runs every stage in ``GRAPH`` order (stories ->
wasm_assets/); ``python -m export <stage>`` reruns one stage alone, and
``python -m export stages`` prints the graph. Inputs and outputs are named by
where they live: ``stories`` (the data file), ``runs/...`` (the training runs,
not shipped) or a file of the artefact folder (``export/artefacts.py``). A
stage may also write a picture of its output (``also``). The evidence is
assembled last from the stage outputs; only the page data, which renders the
evidence for the site, comes after it.

Each stage's code lives in its own module (``run``: ``module:function``,
imported only when the stage runs, so printing the graph or refusing a bad
option runs no stage's imports); ``python -m export`` builds one command per stage from
this graph, with the options the stage declares (``export/options.py``).
Stages share one ``Context``: the corpus is read once per process, whichever
stage asks first.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import Callable

from . import options
from .artefacts import Artefacts


@dataclass
class Context:
    """The options of one ``python -m export`` call and what its stages have loaded."""

    args: object
    corpus: object = None
    cfg: object = None
    results: list | None = None
    onnx_report: dict | None = None

    @property
    def out(self) -> Path:
        return Path(self.args.out)

    @property
    def runs(self) -> Path:
        return Path(getattr(self.args, "runs", "runs"))

    @property
    def records(self) -> Path:
        from .artefacts import RECORDS_DIR

        return Path(getattr(self.args, "records", None) or RECORDS_DIR)

    @property
    def art(self) -> Artefacts:
        return Artefacts(self.out)

    @property
    def checkpoints(self) -> Path:
        return Path(getattr(self.args, "checkpoints", None) or self.art.checkpoints_dir)

    def get_corpus(self):
        if self.corpus is None:
            from .corpus import corpus_from_options

            self.corpus = corpus_from_options(self.args)
        return self.corpus


def load(ref: str) -> Callable:
    """``"export.heads:stage"`` -> that function, its module imported now."""
    module, _, name = ref.partition(":")
    return getattr(import_module(module), name)


@dataclass(frozen=True)
class Stage:
    name: str
    inputs: tuple[str, ...]
    output: str
    run: str  # "module:function" taking a Context: the stage's code, in its own module
    help: str
    also: tuple[str, ...] = field(default_factory=tuple)
    summary: str = ""  # the command's line in `python -m export --help`
    options: Callable = options.protocol  # adds the command's options to its parser
    command: str | None = (
        None  # "module:function" taking the options, when the command alone differs from the stage
    )


GRAPH: tuple[Stage, ...] = (
    Stage(
        "palette",
        ("export/models.py", "export/palette.py"),
        "palette.css",
        "export.palette:stage",
        "the head and model colours as CSS custom properties",
        summary="palette.css: the head and model colours for the site",
    ),
    Stage(
        "vocab",
        ("stories",),
        "vocab.json",
        "export.vocabulary:vocab_stage",
        "the vocabulary (C tokens, T) from the training stories",
        summary="write vocab.json and the tokenizer test vectors",
        options=options.vocab,
        command="export.vocabulary:command",
    ),
    Stage(
        "tokenizer_vectors",
        ("stories",),
        "tokenizer_vectors.json",
        "export.vocabulary:tokenizer_vectors_stage",
        "texts, tokens and ids the browser's tokenizer is tested against",
        summary="the browser tokenizer's test vectors",
    ),
    Stage(
        "train",
        ("stories",),
        "runs/<model>-seed<seed>/",
        "export.protocol:stage",
        "every model x seed (one run: `train --models M --seeds S`; finished runs are skipped)",
        summary="run the training protocol",
        command="export.protocol:command",
    ),
    Stage(
        "onnx",
        ("runs/<model>-seed11/",),
        "models/manifest.json",
        "export.onnx_export:stage",
        "the seed-11 models to ONNX with parity checks, their compact checkpoints and the manifest "
        "(--from-checkpoints: rebuilt from the compact checkpoints, sizes to runs/onnx_rebuild.json)",
        also=(
            "models/*.onnx",
            "models/*.steps.onnx",
            "checkpoints/",
            "parity.json",
            "runs/onnx_report.json",
            "runs/onnx_rebuild.json",
        ),
        summary="export seed-11 checkpoints to ONNX and write the manifest",
        options=options.onnx,
        command="export.onnx_export:command",
    ),
    Stage(
        "measure",
        ("stories", "runs/<model>-seed<seed>/", "runs/onnx_report.json"),
        "runs/measurements.json",
        "export.evidence:measure_stage",
        "every figure measured from the runs: the evidence's core",
        summary="every figure measured from the runs: runs/measurements.json",
    ),
    Stage(
        "heads",
        ("stories", "checkpoints/", "runs/measurements.json"),
        "heads.json",
        "export.heads:stage",
        "knock-out perplexities and the head atlas of the shipped attention models",
        also=("head_atlas.svg",),
        summary="knock-out perplexities and the head atlas of the shipped attention models",
        options=options.heads,
    ),
    Stage(
        "walkthrough",
        ("checkpoints/", "vocab.json", "runs/measurements.json"),
        "walkthrough.json",
        "export.lesson.walkthrough:stage",
        "page 4: the lesson's B = 2 batch through the shipped four-head model",
        summary="write walkthrough.json from the shipped four-head checkpoint",
        options=options.walkthrough,
    ),
    Stage(
        "worksheet",
        (),
        "worksheet.json",
        "export.lesson.worksheet:stage",
        "page 2: the seeded two-head worksheet",
        summary="page 2's worksheet.json",
    ),
    Stage(
        "subwords",
        ("stories",),
        "subwords.json",
        "export.lesson.subwords:stage",
        "page 3: a byte-pair encoder trained on the stories",
        also=("bpe_tokenizer.json",),
        summary="page 3's subwords.json",
    ),
    Stage(
        "toy_task",
        (),
        "toy_task.json",
        "export.toy_task:stage",
        "page 5: tiny 1/2/4-head models of equal width on the synthetic task one head cannot learn",
        summary="train tiny 1/2/4-head models on the synthetic two-source task -> toy_task.json",
        options=options.toy_task,
        command="export.toy_task:command",
    ),
    Stage(
        "example_search",
        ("vocab.json", "models/*.onnx"),
        "example_search.json",
        "export.lesson.example_search:stage",
        "page 1: the in-vocabulary sentence where two heads of the four-head model most clearly differ",
        summary="page 1's sentence, chosen with the four-head model",
    ),
    Stage(
        "build_weights",
        ("models/manifest.json", "models/*.onnx"),
        "build_weights.json",
        "export.lesson.build_weights:stage",
        "the build exercise: the four-head model's attention weights, [out, in] with biases, from its ONNX, "
        "and the graph of the rest of the model after attention",
        also=("models/*.tail.onnx",),
        summary="build_weights.json: the build exercise's weights",
    ),
    Stage(
        "sweep",
        ("records/runs/<model>-seed<seed>.json",),
        "head_sweep.json",
        "export.head_sweep:stage",
        "page 5's head-count sweep: every attention model (1, 2, 4, 8, 16 heads) x seed, alike-checked "
        "(--time-updates: also time one update per model on one thread)",
        summary="head_sweep.json: the head-count sweep from finished runs",
        options=options.protocol_timed,
    ),
    Stage(
        "microgpt_heads",
        ("names", "microgpt-trained.json", "microgpt-one-head.json"),
        "microgpt_heads.json",
        "export.microgpt.head_effect:stage",
        "the microgpt page: both microgpts' loss over the whole names list, and where switching heads off "
        "moves the next letter most (--names or $NAMES_PATH: the list they trained on)",
        summary="microgpt_heads.json: where microgpt's heads matter",
        options=options.microgpt_heads,
    ),
    Stage(
        "evidence",
        (
            "runs/measurements.json",
            "runs/onnx_rebuild.json",
            "records/runs/<model>-seed<seed>.json",
            "heads.json",
            "head_sweep.json",
        ),
        "evidence.json",
        "export.evidence:evidence_stage",
        "assembled last: the measurements (with a rebuild's ONNX sizes) and every stage section",
        also=("validation_traces.svg",),
        summary="assemble evidence.json and the trace plot, last",
    ),
    Stage(
        "head_growth",
        ("stories", "evidence.json"),
        "head_growth.json",
        "export.head_growth:stage",
        "page 5: a rerun of the four-head seed-11 training with snapshots (resumable), each measured",
        also=("runs/head-growth/",),
        summary="rerun the four-head seed-11 training with snapshots (resumable) and measure each -> "
        "head_growth.json",
        options=options.head_growth,
        command="export.head_growth:command",
    ),
    Stage(
        "pagedata",
        (
            "evidence.json",
            "vocab.json",
            "walkthrough.json",
            "models/manifest.json",
            "models/*.onnx",
            "example_search.json",
            "microgpt_heads.json",
        ),
        "page_data.json",
        "export.lesson.page_data:stage",
        "what the pages draw that is computed, not measured: the build only renders",
        summary="page_data.json: what the pages draw that is computed",
    ),
)
STAGES = {stage.name: stage for stage in GRAPH}


def check_order() -> None:
    """Every input a stage names is an earlier stage's output (or the stories, or one of its pictures)."""
    made = {
        "stories",
        "runs/<model>-seed11/",
        "export/models.py",
        "export/palette.py",  # seed 11: some of train's output
        "records/runs/<model>-seed<seed>.json",  # tracked: each finished run's record (export/run_records.py)
        "names",
        "microgpt-trained.json",
        "microgpt-one-head.json",
    }  # microgpt's, from `make microgpt`
    for stage in GRAPH:
        missing = [i for i in stage.inputs if i not in made]
        if missing:
            raise AssertionError(
                f"stage {stage.name} reads {missing} before any stage writes it"
            )
        made |= {stage.output, *stage.also}


def run(names: list[str] | tuple[str, ...], args) -> Context:
    ctx = Context(args)
    for name in names:
        print(f"== stage {name}: {STAGES[name].help}")
        started = time.perf_counter()
        load(STAGES[name].run)(ctx)
        # where a rebuild's time goes, stage by stage, in every log
        print(f"== stage {name} took {time.perf_counter() - started:.1f} s")
    return ctx


def run_all(args) -> Context:
    return run([stage.name for stage in GRAPH], args)


def command(args) -> None:
    """``python -m export NAME`` for a stage, ``run A B`` or ``all``: the stages through one Context."""
    if args.command == "all":
        run_all(args)
    else:
        run(args.stage_names if args.command == "run" else [args.command], args)


def named_stages(p) -> None:
    """``run``'s options: the stages to run, then the protocol's options."""
    p.add_argument(
        "stage_names",
        nargs="+",
        choices=list(STAGES),
        metavar="STAGE",
        help=f"one or more of: {', '.join(STAGES)}",
    )
    options.protocol_timed(p)


def print_graph(args) -> None:
    print(describe())


def describe() -> str:
    lines = []
    for stage in GRAPH:
        also = f" (+ {', '.join(stage.also)})" if stage.also else ""
        lines.append(
            f"{stage.name:18} {', '.join(stage.inputs) or '-':62} -> {stage.output}{also}"
        )
    return "\n".join(lines)
