"""Write ``evidence.json``: every figure the site shows, with where it came from.

Schema ``mha-evidence/1`` (checked by ``validate``):

``source``      data file, sha256, hub revision (if any), stories requested /
                used / in file, ``capped`` (true when the file held fewer than
                requested), first and last row, dataset credit
``split``       seed, fractions, unit; ``rows``: source row numbers per split
``audit``       per split: stories, tokens (ordinary), windows, oov_tokens, oov_rate
``vocabulary``  C, T, rules_version, special ids
``protocol``    models, seeds, updates, batch_size, eval_every, selection_windows,
                model sizes (d_model, hidden, heads), optimizer description
``runs``        one per model x seed: seed, best_update, val_loss, test_loss,
                test_perplexity, parameters, train_seconds, trace [[update, val_loss]], ...
``aggregates``  per model: perplexity_mean / _sd (sample sd, n - 1, over per-run
                exp(loss)), test_loss_mean / _sd, train_seconds_mean / _sd, parameters
``comparison``  relative change of four heads vs one head in mean perplexity, and the gap
``paired``      every shipped model against four heads, paired by seed with a 95 % t-interval,
                over the source's seeds and every declared seed with a finished run
                (``export/seed_comparison.py``; ``runs``, ``aggregates``, ``comparison`` too
                are read from the tracked run records at assembly)
``device``      where the runs trained: device (cpu, cuda, mps), name (CPU model or GPU
                name), cpu model string, threads, torch version, platform
``timing``      what the training times include, and a note on the conditions they ran in
``stories``     excerpt, shortest test story, two longest stories (row, text,
                token_count, word_count) with the dataset credit
``preset``      the held-out preset: row, prompt, prompt_tokens, max_new_tokens,
                seed-11 greedy continuations per model (ids, tokens, text, ended_with_eos)
``artefacts``   file names written beside it
``onnx``        per model: shipped encoding, sizes, perplexities of every encoding
                tried, parity (from the ONNX stage's report, ``runs/onnx_report.json``)

``build_evidence`` joins the sections that ``SECTIONS`` lists; a new
measurement is one more function there. Two stages of the graph
(``export/stages.py``) share this module: ``measure`` writes those sections to
``runs/measurements.json`` (it needs the training runs), and ``evidence``, the
last measuring stage, assembles ``evidence.json`` from the measurements and the
later stages' own files (``STAGE_SECTIONS``). ``assemble`` is the only writer of
evidence.json; no other stage rewrites it. Without a runs folder (a rebuild
from the shipped checkpoints) the measurements are the committed
evidence.json's own sections, the stage sections replaced. The vocabulary and
its tokenizer vectors are the vocab stage's (export/vocabulary.py), the preset
and the story examples export/preset.py's.
``heads``       (optional) embedded from the heads stage's own ``heads.json``
                (``export/heads.py``): knock-out perplexities of the four-head
                model, the head atlas of both attention models, the preset
                without each head
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path

from . import atomic
from .artefacts import Artefacts, measurements_json, onnx_rebuild, onnx_report, run_dir
from .corpus import Corpus, split_description
from .defaults import PRESET_MAX_NEW, PRESET_SEED
from .device import device_description
from .digest import file_sha256
from .models import get_spec
from .preset import preset_continuations, preset_of, story_examples
from .protocol import aggregate
from .seed_comparison import comparison_section, sections as recorded_sections
from .train import RunResult, TrainConfig
from .wordlm import RULES_VERSION, SPECIAL_IDS, tokenize

SCHEMA = "mha-evidence/1"
REQUIRED = {
    "schema": str,
    "source": dict,
    "split": dict,
    "audit": dict,
    "vocabulary": dict,
    "protocol": dict,
    "runs": list,
    "aggregates": dict,
    "comparison": dict,
    "device": dict,
    "stories": dict,
    "preset": dict,
    "artefacts": dict,
}


@dataclass
class Inputs:
    """Everything the evidence is made from."""

    corpus: Corpus
    cfg: TrainConfig
    results: list[RunResult]
    runs: Path
    timing_note: str = ""
    onnx_report: dict | None = None


def data_sections(x: Inputs) -> dict:
    return {
        "source": x.corpus.source.describe(),
        "split": {**split_description(), "rows": x.corpus.split_rows},
        "audit": x.corpus.audit,
        "vocabulary": {
            "C": len(x.corpus.vocab),
            "T": x.corpus.T,
            "rules_version": RULES_VERSION,
            "special": dict(SPECIAL_IDS),
            "built_from": "training stories only; ties broken alphabetically",
        },
    }


def _shared(values: dict):
    """One number when every model has it, else the number per model."""
    return next(iter(values.values())) if len(set(values.values())) == 1 else values


def protocol_sections(x: Inputs) -> dict:
    cfg, specs = x.cfg, [get_spec(m) for m in x.cfg.models]
    aggregates = aggregate(x.results)
    comparison = comparison_section(aggregates)
    device = x.results[0].device if x.results else device_description()
    where = (
        "on the CPU"
        if device.get("device", "cpu") == "cpu"
        else f"on {device.get('name', device['device'])}"
    )
    return {
        "protocol": {
            "models": list(cfg.models),
            "labels": {s.name: s.label for s in specs},
            "seeds": list(cfg.seeds),
            "updates": cfg.updates,
            "batch_size": cfg.batch_size,
            "eval_every": cfg.eval_every,
            "selection_windows": cfg.selection_windows,
            "d_model": _shared({s.name: s.d_model for s in specs}),
            "hidden": _shared({s.name: s.hidden for s in specs}),
            "heads": {s.name: s.heads for s in specs},
            "optimizer": cfg.optimizer_description(),
            "selection": "lowest validation loss on the fixed selection slice; test loss on all test windows",
        },
        "runs": [r.record() for r in x.results],
        "aggregates": aggregates,
        "comparison": comparison,
        "device": device,
        "timing": {
            "what": f"wall-clock seconds per run, {cfg.updates:,} updates plus every validation pass, {where}",
            "note": x.timing_note,
        },
    }


def story_sections(x: Inputs) -> dict:
    stories = story_examples(x.corpus)
    preset_story, prompt = preset_of(x.corpus)
    return {
        "stories": stories,
        "preset": {
            "row": preset_story["row"],
            "prompt": prompt,
            "prompt_tokens": tokenize(prompt),
            "max_new_tokens": PRESET_MAX_NEW,
            "seed": PRESET_SEED,
            "decoding": "greedy",
            "continuations": preset_continuations(x.corpus, x.cfg, x.runs, prompt),
        },
    }


def artefact_sections(x: Inputs) -> dict:
    artefacts = {
        "vocabulary": "vocab.json",
        "tokenizer_vectors": "tokenizer_vectors.json",
        "trace_plot": "validation_traces.svg",
    }
    if x.onnx_report is None:
        return {"artefacts": artefacts}
    return {
        "artefacts": {
            **artefacts,
            "models": "models/manifest.json",
            "parity": "parity.json",
        },
        "onnx": x.onnx_report["models"],
    }


SECTIONS = [data_sections, protocol_sections, story_sections, artefact_sections]


def build_evidence(
    corpus: Corpus,
    cfg: TrainConfig,
    results: list[RunResult],
    runs: Path,
    timing_note: str = "",
    onnx_report: dict | None = None,
) -> dict:
    # The lesson's comparison is between the shipped models; the head-count sweep's other models
    # have their own section (head_sweep.json, embedded below).
    shipped = tuple(m for m in cfg.models if get_spec(m).ships) or cfg.models
    cfg = replace(cfg, models=shipped)
    results = [r for r in results if r.model in shipped]
    inputs = Inputs(corpus, cfg, results, Path(runs), timing_note, onnx_report)
    evidence = {"schema": SCHEMA}
    for section in SECTIONS:
        evidence.update(section(inputs))
    return evidence


# Stages after training write their own artefact; the evidence embeds each under its key
# (the file stays the stage's output, evidence.json stays written in one place: here).
STAGE_SECTIONS = {"heads": "heads.json", "head_sweep": "head_sweep.json"}


def attach_stage_sections(evidence: dict, out: Path) -> dict:
    for key, name in STAGE_SECTIONS.items():
        path = out / name
        if path.is_file():
            evidence[key] = json.loads(path.read_text())
            evidence["artefacts"][key] = name
    return evidence


def rebuilt_onnx_sizes(evidence: dict, out: Path, runs: Path | None) -> dict:
    """The byte sizes from ``onnx --from-checkpoints`` (its report ``runs/onnx_rebuild.json``), put into ``evidence``.

    The rebuild changes graphs, not weights, so only the sizes move; every
    measured figure stays the measurements' own. A model's sizes are taken
    only while its ONNX file in ``out`` is still the one the rebuild wrote
    (same sha256): a later full ``onnx`` stage writes other files, and then
    the measurements, made from its own report, hold the right sizes.
    """
    path = onnx_rebuild(runs) if runs is not None else None
    if path is None or not path.is_file() or "onnx" not in evidence:
        return evidence
    report = json.loads(path.read_text())
    for name, sizes in report["models"].items():
        shipped = Artefacts(out).model_onnx(name)
        if (
            name not in evidence["onnx"]
            or not shipped.is_file()
            or file_sha256(shipped) != sizes["sha256"]
        ):
            continue
        entry = evidence["onnx"][name]
        entry["bytes"], entry["float32_bytes"] = sizes["bytes"], sizes["float32_bytes"]
        for label, size in sizes["tried_bytes"].items():
            entry["tried"][label]["bytes"] = size
    return evidence


def validate(evidence: dict) -> None:
    """Raise ValueError when ``evidence`` does not follow the schema above."""
    for key, kind in REQUIRED.items():
        if not isinstance(evidence.get(key), kind):
            raise ValueError(f"evidence.{key} is missing or not a {kind.__name__}")
    if evidence["schema"] != SCHEMA:
        raise ValueError(f"unknown evidence schema {evidence['schema']!r}")
    for r in evidence["runs"]:
        for k in (
            "model",
            "seed",
            "best_update",
            "val_loss",
            "test_loss",
            "test_perplexity",
            "parameters",
            "train_seconds",
            "trace",
        ):
            if k not in r:
                raise ValueError(f"a run lacks {k!r}")
        if not math.isclose(
            r["test_perplexity"], math.exp(r["test_loss"]), rel_tol=1e-9
        ):
            raise ValueError("a run's test_perplexity is not exp(test_loss)")
    for split, a in evidence["audit"].items():
        if a["windows"] != a["tokens"] + a["stories"]:
            raise ValueError(f"{split}: windows != tokens + stories")
    for k in ("row", "prompt", "continuations"):
        if k not in evidence["preset"]:
            raise ValueError(f"evidence.preset lacks {k!r}")
    if "heads" in evidence:
        heads = evidence["heads"]
        for k in ("knockout", "atlas", "colours", "preset"):
            if k not in heads:
                raise ValueError(f"evidence.heads lacks {k!r}")
        for name, row in heads["knockout"].items():
            if not math.isclose(
                row["test_perplexity"], math.exp(row["test_loss"]), rel_tol=1e-9
            ):
                raise ValueError(
                    f"evidence.heads.knockout.{name}: test_perplexity is not exp(test_loss)"
                )


def plot_traces(evidence: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = (
        "validation-traces"  # the same ids every time: the same bytes
    )
    colours = {name: get_spec(name).colour for name in evidence["protocol"]["models"]}
    styles = ["-", "--", ":"]
    seeds = evidence["protocol"]["seeds"]
    fig, ax = plt.subplots(figsize=(7.5, 5.0), dpi=100)
    for r in evidence["runs"]:
        xs, ys = zip(*r["trace"])
        label = f"{evidence['protocol']['labels'][r['model']]}, seed {r['seed']}"
        ax.plot(
            xs,
            ys,
            styles[seeds.index(r["seed"]) % 3],
            color=colours[r["model"]],
            lw=1.4,
            label=label,
        )
        ax.plot(
            [r["best_update"]],
            [r["val_loss"]],
            "o",
            color=colours[r["model"]],
            ms=6,
            mec="black",
        )
    ax.set_xlabel("update")
    ax.set_ylabel("validation loss (selection slice, nats)")
    ax.set_title("Validation traces; circles mark the chosen checkpoints")
    ax.grid(alpha=0.3)
    ax.legend(
        fontsize=7,
        ncol=3,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.14),
        frameon=False,
    )
    fig.tight_layout()
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight")
    plt.close(fig)
    atomic.write_bytes(path, buf.getvalue())


def read_onnx_report(runs: Path) -> dict | None:
    """The ONNX stage's report, if it was made from the checkpoints now in ``runs``."""
    path = onnx_report(runs)
    if not path.is_file():
        return None
    report = json.loads(path.read_text())
    for name, digest in report["checkpoints"].items():
        ckpt = run_dir(runs, name, PRESET_SEED) / "best.pt"
        if not ckpt.is_file() or file_sha256(ckpt) != digest:
            raise ValueError(
                f"{path} was made from other checkpoints than {ckpt}: run `python -m export onnx` again"
            )
    return report


def write_measurements(
    corpus: Corpus,
    cfg: TrainConfig,
    results: list[RunResult],
    runs: Path,
    log=print,
    timing_note: str = "",
    onnx_report: dict | None = None,
) -> dict:
    """The measure stage: every section measured from the corpus, the runs and the ONNX report."""
    measured = build_evidence(corpus, cfg, results, runs, timing_note, onnx_report)
    path = atomic.write_json(measurements_json(runs), measured)
    if onnx_report is None:
        log(
            "note: no ONNX report in the runs folder, so the evidence has no `onnx` section; "
            "run `python -m export onnx`, then `measure` again"
        )
    log(f"wrote {path}")
    return measured


def measurements(out: Path, runs: Path | None = None) -> dict:
    """evidence.json's core: ``runs/measurements.json``, else the committed evidence without stage sections."""
    if runs is not None and measurements_json(runs).is_file():
        return json.loads(measurements_json(runs).read_text())
    path = Artefacts(out).evidence
    if not path.is_file():
        raise FileNotFoundError(
            f"neither {measurements_json(runs or 'runs')} nor {path} exists: "
            "run `python -m export measure` (after `train` and `onnx`) first"
        )
    evidence = json.loads(path.read_text())
    for key in STAGE_SECTIONS:
        evidence.pop(key, None)
        evidence["artefacts"].pop(key, None)
    return evidence


def assemble(
    out: Path, runs: Path | None = None, log=print, records: Path | None = None
) -> dict:
    """The evidence stage, last: the measurements, the runs' records and every stage section, as evidence.json."""
    evidence = rebuilt_onnx_sizes(measurements(out, runs), Path(out), runs)
    evidence.update(
        recorded_sections(
            evidence, **({"records": Path(records)} if records else {}), runs=runs
        )
    )
    evidence = attach_stage_sections(evidence, Path(out))
    validate(evidence)
    Path(out).mkdir(parents=True, exist_ok=True)
    plot_traces(evidence, Artefacts(out).validation_traces_svg)
    atomic.write_json(Artefacts(out).evidence, evidence)
    log(f"wrote {Artefacts(out).evidence}, validation_traces.svg")
    return evidence


def write_all(
    corpus: Corpus,
    cfg: TrainConfig,
    results: list[RunResult],
    runs: Path,
    out: Path,
    log=print,
    timing_note: str = "",
    onnx_report: dict | None = None,
) -> dict:
    """measure, then evidence: what a test or a notebook needs in one call."""
    write_measurements(corpus, cfg, results, runs, log, timing_note, onnx_report)
    return assemble(out, runs, log)


def measure_stage(ctx) -> None:
    """The measure stage: the runs (trained now if this process has not) measured into runs/measurements.json."""
    from .protocol import stage as train_stage

    # reruns alone: finished runs are reused, so this trains nothing new
    if ctx.results is None:
        train_stage(ctx)
    report = (
        ctx.onnx_report if ctx.onnx_report is not None else read_onnx_report(ctx.runs)
    )
    write_measurements(
        ctx.get_corpus(),
        ctx.cfg,
        ctx.results,
        ctx.runs,
        timing_note=getattr(ctx.args, "timing_note", ""),
        onnx_report=report,
    )


def evidence_stage(ctx) -> None:
    assemble(ctx.out, ctx.runs, records=ctx.records)
