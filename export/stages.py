"""The pipeline as a declared graph: each stage has a name, its inputs and one output.

``python -m export all`` runs every stage in ``GRAPH`` order (stories ->
wasm_assets/); ``python -m export <stage>`` reruns one stage alone, and
``python -m export stages`` prints the graph. Inputs and outputs are named by
where they live: ``stories`` (the data file), ``runs/...`` (the training runs,
not shipped) or a file of the artefact folder (``export/artefacts.py``). A
stage may also write a picture of its output (``also``). The evidence is
assembled last from the stage outputs; only the page data, which renders the
evidence for the site, comes after it.

Stages share one ``Context``: the corpus is read once per process, whichever
stage asks first.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

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
    def art(self) -> Artefacts:
        return Artefacts(self.out)

    def get_corpus(self):
        if self.corpus is None:
            from .__main__ import _load_corpus

            self.corpus = _load_corpus(self.args)
        return self.corpus


@dataclass(frozen=True)
class Stage:
    name: str
    inputs: tuple[str, ...]
    output: str
    run: Callable[[Context], None]
    help: str
    also: tuple[str, ...] = field(default_factory=tuple)


def _vocab(ctx: Context) -> None:
    from . import atomic

    corpus = ctx.get_corpus()
    path = atomic.write_json(ctx.art.vocab, corpus.vocab.to_json(corpus.T), indent=None)
    print(f"wrote {path}")


def _tokenizer_vectors(ctx: Context) -> None:
    from . import atomic
    from .evidence import tokenizer_vectors

    print(f"wrote {atomic.write_json(ctx.art.tokenizer_vectors, tokenizer_vectors(ctx.get_corpus()))}")


def _train(ctx: Context) -> None:
    from .__main__ import cmd_train

    ctx.corpus, ctx.cfg, ctx.results = cmd_train(ctx.args, ctx.get_corpus())


def _onnx(ctx: Context) -> None:
    from .__main__ import cmd_onnx

    ctx.onnx_report = cmd_onnx(ctx.args, ctx.get_corpus())


def _measure(ctx: Context) -> None:
    from .evidence import read_onnx_report, write_measurements

    if ctx.results is None:  # reruns alone: finished runs are reused, so this trains nothing new
        _train(ctx)
    report = ctx.onnx_report if ctx.onnx_report is not None else read_onnx_report(ctx.runs)
    write_measurements(ctx.get_corpus(), ctx.cfg, ctx.results, ctx.runs,
                       timing_note=getattr(ctx.args, "timing_note", ""), onnx_report=report)


def _heads(ctx: Context) -> None:
    from .heads import write

    write(Path(getattr(ctx.args, "checkpoints", None) or ctx.art.checkpoints_dir), ctx.out,
          data=getattr(ctx.args, "data", None), runs=ctx.runs)


def _walkthrough(ctx: Context) -> None:
    from .evidence import measurements
    from .lesson.walkthrough import write

    prompt = measurements(ctx.out, ctx.runs)["preset"]["prompt"]
    write(Path(getattr(ctx.args, "checkpoints", None) or ctx.art.checkpoints_dir), ctx.out, prompt=prompt)


def _worksheet(ctx: Context) -> None:
    from .lesson import worksheet

    print(f"wrote {worksheet.write(ctx.art.worksheet)}")


def _subwords(ctx: Context) -> None:
    from .lesson import subwords

    for path in subwords.write(ctx.out, getattr(ctx.args, "data", None)):
        print(f"wrote {path}")


def _example_search(ctx: Context) -> None:
    from .lesson import example_search

    try:
        print(f"wrote {example_search.write(ctx.art)}")
    except example_search.GrammarOutsideVocabulary as exc:
        # Only a vocabulary other than the lesson's (a tiny test run) lacks those everyday words; page 1
        # then keeps the constant sentence of the page-data stage.
        print(f"example_search: skipped, {exc}")


def _sweep(ctx: Context) -> None:
    from .head_sweep import sweep_models, write

    models = getattr(ctx.args, "models", None)
    if models is not None and not set(sweep_models()) <= set(models):
        print("sweep: skipped (--models leaves out some of the attention models; head_sweep.json unchanged)")
        return
    seeds = tuple(getattr(ctx.args, "seeds", ()) or ()) or None
    from .defaults import SEEDS

    write(ctx.runs, seeds or SEEDS, ctx.out, measure_time=getattr(ctx.args, "time_updates", False))


def _evidence(ctx: Context) -> None:
    from .evidence import assemble

    assemble(ctx.out, ctx.runs)


def _toy_task(ctx: Context) -> None:
    from .toy_task import build

    build(ctx.out)


def _head_growth(ctx: Context) -> None:
    from .head_growth import build

    build(ctx.out, runs=ctx.runs, data=getattr(ctx.args, "data", None))


def _palette(ctx: Context) -> None:
    from .palette import write

    write(ctx.art.palette_css)


def _pagedata(ctx: Context) -> None:
    from .lesson.page_data import write

    write(ctx.art)


GRAPH: tuple[Stage, ...] = (
    Stage("palette", ("export/models.py", "export/palette.py"), "palette.css", _palette,
          "the head and model colours as CSS custom properties"),
    Stage("vocab", ("stories",), "vocab.json", _vocab, "the vocabulary (C tokens, T) from the training stories"),
    Stage("tokenizer_vectors", ("stories",), "tokenizer_vectors.json", _tokenizer_vectors,
          "texts, tokens and ids the browser's tokenizer is tested against"),
    Stage("train", ("stories",), "runs/<model>-seed<seed>/", _train,
          "every model x seed (one run: `train --models M --seeds S`; finished runs are skipped)"),
    Stage("onnx", ("runs/<model>-seed11/",), "models/manifest.json", _onnx,
          "the seed-11 models to ONNX with parity checks, their compact checkpoints and the manifest "
          "(--from-checkpoints: rebuilt from the compact checkpoints, sizes to runs/onnx_rebuild.json)",
          also=("models/*.onnx", "models/*.steps.onnx", "checkpoints/", "parity.json", "runs/onnx_report.json",
                "runs/onnx_rebuild.json")),
    Stage("measure", ("stories", "runs/<model>-seed<seed>/", "runs/onnx_report.json"), "runs/measurements.json",
          _measure, "every figure measured from the runs: the evidence's core"),
    Stage("heads", ("stories", "checkpoints/", "runs/measurements.json"), "heads.json", _heads,
          "knock-out perplexities and the head atlas of the shipped attention models", also=("head_atlas.svg",)),
    Stage("walkthrough", ("checkpoints/", "vocab.json", "runs/measurements.json"), "walkthrough.json",
          _walkthrough, "page 4: the lesson's B = 2 batch through the shipped four-head model"),
    Stage("worksheet", (), "worksheet.json", _worksheet, "page 2: the seeded two-head worksheet"),
    Stage("subwords", ("stories",), "subwords.json", _subwords, "page 3: a byte-pair encoder trained on the stories",
          also=("bpe_tokenizer.json",)),
    Stage("toy_task", (), "toy_task.json", _toy_task,
          "page 5: tiny 1/2/4-head models of equal width on the synthetic task one head cannot learn"),
    Stage("example_search", ("vocab.json", "models/*.onnx"), "example_search.json", _example_search,
          "page 1: the in-vocabulary sentence where two heads of the four-head model most clearly differ"),
    Stage("sweep", ("runs/<model>-seed<seed>/",), "head_sweep.json", _sweep,
          "page 5's head-count sweep: every attention model (1, 2, 4, 8, 16 heads) x seed, alike-checked "
          "(--time-updates: also time one update per model on one thread)"),
    Stage("evidence", ("runs/measurements.json", "runs/onnx_rebuild.json", "heads.json", "head_sweep.json"),
          "evidence.json", _evidence, "assembled last: the measurements (with a rebuild's ONNX sizes) and every "
          "stage section", also=("validation_traces.svg",)),
    Stage("head_growth", ("stories", "evidence.json"), "head_growth.json", _head_growth,
          "page 5: a rerun of the four-head seed-11 training with snapshots (resumable), each measured",
          also=("runs/head-growth/",)),
    Stage("pagedata", ("evidence.json", "vocab.json", "walkthrough.json", "models/manifest.json", "models/*.onnx",
                       "example_search.json"),
          "page_data.json", _pagedata, "what the pages draw that is computed, not measured: the build only renders"),
)
STAGES = {stage.name: stage for stage in GRAPH}


def check_order() -> None:
    """Every input a stage names is an earlier stage's output (or the stories, or one of its pictures)."""
    made = {"stories", "runs/<model>-seed11/", "export/models.py", "export/palette.py"}  # the seed-11 runs are some of train's output
    for stage in GRAPH:
        missing = [i for i in stage.inputs if i not in made]
        if missing:
            raise AssertionError(f"stage {stage.name} reads {missing} before any stage writes it")
        made |= {stage.output, *stage.also}


def run(names: list[str] | tuple[str, ...], args) -> Context:
    ctx = Context(args)
    for name in names:
        print(f"== stage {name}: {STAGES[name].help}")
        STAGES[name].run(ctx)
    return ctx


def run_all(args) -> Context:
    return run([stage.name for stage in GRAPH], args)


def describe() -> str:
    lines = []
    for stage in GRAPH:
        also = f" (+ {', '.join(stage.also)})" if stage.also else ""
        lines.append(f"{stage.name:18} {', '.join(stage.inputs) or '-':62} -> {stage.output}{also}")
    return "\n".join(lines)
