"""Heads forming during training: snapshots of a rerun of the shipped four-head run, measured.

The shipped protocol keeps only each run's selected checkpoint, so page 5's
training slider needs a rerun: the four-head model, seed 11, the shipped
settings (``TrainConfig()``: 6,000 updates of 512 windows, the same data,
split and vocabulary), trained by ``export.train.train_run`` itself (same
initial weights, batch draws, learning-rate schedule and selection slice),
with hooks (``_Snapshots``). Along the way it saves the float32 weights at log-spaced updates
(``SNAPSHOT_UPDATES``) and, every ``RESUME_EVERY`` updates, everything needed
to carry on (weights, optimiser, batch generator, best-so-far), so an
interrupted rerun resumes where it stopped and draws the same batches.

``measure`` then reads each snapshot and computes, with the code that
measures the shipped model (``export.heads``):

* each head's attention at the final position of the preset prompt and a few
  short prompts (``PROMPTS``);
* the head-atlas shares (offset, story start, punctuation, earlier
  occurrence) over a fixed test subset (the first ``SUBSET`` test windows);
* the knock-out perplexity of each head on that subset.

It writes one small JSON file, ``head_growth.json`` (no ONNX per snapshot),
holding also the rerun's selected checkpoint's full test perplexity beside the
shipped run's, because the page must say the snapshots come from a rerun.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import torch

from . import atomic
from .artefacts import Artefacts
from .defaults import PRESET_SEED
from .models import get_spec, most_heads_model
from .train import Best, RunHooks, TrainConfig, state_of, train_run, train_step

SCHEMA = "mha-head-growth/1"
MODEL = most_heads_model().name  # the shipped model whose heads the lesson takes apart
SNAPSHOT_UPDATES = (0, 30, 100, 300, 1000, 3000, 6000)
RESUME_EVERY = 250
SUBSET = 2048  # test windows for the atlas and the knock-out at every snapshot
# Short prompts besides the preset one: a repeated name (earlier occurrence), a
# sentence after a full stop (punctuation, story start), a plain phrase (offsets).
PROMPTS = ("Lily saw a cat. Lily", "Tom was sad. He", "the big red ball")


def snapshots_for(updates: int) -> tuple[int, ...]:
    """``SNAPSHOT_UPDATES`` for a run of ``updates`` updates: those before its end, and its end."""
    return (*(u for u in SNAPSHOT_UPDATES if u < updates), updates)


def rerun_folder(runs: Path, seed: int = PRESET_SEED) -> Path:
    return Path(runs) / "head-growth" / f"{MODEL}-seed{seed}"


def snapshot_path(folder: Path, update: int) -> Path:
    return Path(folder) / f"snapshot-{update:05d}.pt"


class _Snapshots(RunHooks):
    """``train_run``'s hooks for the rerun: snapshots at ``snapshots``, and a resume file every ``resume_every``."""

    def __init__(
        self,
        folder: Path,
        key: dict,
        cfg: TrainConfig,
        snapshots: tuple[int, ...],
        resume_every: int,
        log=print,
    ):
        self.folder, self.key, self.cfg, self.snapshots, self.resume_every, self.log = (
            folder,
            key,
            cfg,
            snapshots,
            resume_every,
            log,
        )
        self.resume_file = folder / "resume.pt"

    def resume(self, model, opt, batches):
        if self.resume_file.is_file():
            saved = torch.load(self.resume_file, weights_only=False)
            if saved["key"] == self.key:
                model.load_state_dict(saved["model"])
                opt.load_state_dict(saved["optimizer"])
                batches.set_state(saved["generator"])
                self.log(f"resuming the rerun at update {saved['update']}")
                return (
                    Best(*saved["best"]),
                    saved["trace"],
                    saved["recent"],
                    saved["update"],
                    saved["seconds"],
                )
        if 0 in self.snapshots:
            torch.save(state_of(model), snapshot_path(self.folder, 0))
        return None

    def step(self, *args):
        # the protocol's own update, looked up here so that a test can interrupt it
        return train_step(*args)

    def after_update(self, done, model, opt, batches, carry):
        best, trace, recent, elapsed = carry
        if done in self.snapshots:
            torch.save(state_of(model), snapshot_path(self.folder, done))
        if done % self.resume_every == 0 and done < self.cfg.updates:
            tmp = self.resume_file.with_suffix(".tmp")
            torch.save(
                {
                    "key": self.key,
                    "model": state_of(model),
                    "optimizer": opt.state_dict(),
                    "generator": batches.get_state(),
                    "best": [best.val_loss, best.update, best.state],
                    "trace": trace,
                    "recent": recent,
                    "update": done,
                    "seconds": elapsed,
                },
                tmp,
            )
            tmp.replace(self.resume_file)
            self.log(
                f"update {done}/{self.cfg.updates}: train {sum(recent) / len(recent):.3f}, best val "
                f"{best.val_loss:.4f} at {best.update}, {elapsed:.0f} s"
            )


def train_with_snapshots(
    corpus,
    folder: Path,
    cfg: TrainConfig = TrainConfig(),
    seed: int = PRESET_SEED,
    snapshots: tuple[int, ...] = SNAPSHOT_UPDATES,
    resume_every: int = RESUME_EVERY,
    log=print,
) -> dict:
    """The rerun: ``train_run`` itself on the CPU, with hooks saving snapshots; resumes from ``folder/resume.pt``.

    Returns the rerun's result (selected update, validation and test loss and
    perplexity), also written to ``folder/result.json``; a finished rerun is not
    trained again.
    """
    folder = Path(folder)
    done_path = folder / "result.json"
    key = {
        "corpus": corpus.key(),
        **cfg.run_key(MODEL),
        "seed": seed,
        "snapshots": list(snapshots),
    }
    key = json.loads(json.dumps(key))
    if done_path.is_file():
        result = json.loads(done_path.read_text())
        if result.get("key") == key and all(
            snapshot_path(folder, u).is_file() for u in snapshots
        ):
            return result
    if max(snapshots) > cfg.updates:
        raise ValueError(
            f"snapshot update {max(snapshots)} is past the run's {cfg.updates} updates"
        )
    folder.mkdir(parents=True, exist_ok=True)
    hooks = _Snapshots(folder, key, cfg, snapshots, resume_every, log)
    run, model = train_run(MODEL, seed, corpus, cfg, progress=False, hooks=hooks)
    torch.save(state_of(model), folder / "selected.pt")
    result = {
        "model": MODEL,
        "seed": seed,
        "parameters": run.parameters,
        "best_update": run.best_update,
        "val_loss": run.val_loss,
        "test_loss": run.test_loss,
        "test_perplexity": run.test_perplexity,
        "train_seconds": run.train_seconds,
        "updates": cfg.updates,
        "batch_size": cfg.batch_size,
        "trace": run.trace,
        "threads": torch.get_num_threads(),
        "key": key,
    }
    atomic.write_json(done_path, result)
    hooks.resume_file.unlink(missing_ok=True)
    log(
        f"rerun finished: best update {run.best_update}, test perplexity {run.test_perplexity:.2f}, "
        f"{run.train_seconds:.0f} s"
    )
    return result


# --------------------------------------------------------------------------- measuring the snapshots


class _FirstWindows:
    """The first n windows of a WindowSet: the fixed test subset every snapshot is measured on."""

    def __init__(self, windows, n: int):
        self.windows, self.n = windows, min(n, len(windows))

    def __len__(self) -> int:
        return self.n

    def batch(self, index: torch.Tensor):
        return self.windows.batch(index)


@torch.no_grad()
def prompt_attention(model, itos: list[str], prompt: str) -> dict:
    """Each head's weights from the final position of ``prompt`` over its real (non-PAD) tokens."""
    from .generate import prompt_history
    from .windows import context_window
    from .wordlm import BOS_ID, PAD_ID

    ids = context_window(prompt_history(itos, prompt), model.T)
    _, A = model(torch.tensor([ids]), return_attention=True)
    slots = [j for j, t in enumerate(ids) if t != PAD_ID]
    return {
        "prompt": prompt,
        "tokens": ["<BOS>" if ids[j] == BOS_ID else itos[ids[j]] for j in slots],
        "weights": [
            [round(float(A[0, h, j]), 5) for j in slots] for h in range(model.heads)
        ],
    }


def measure_model(model, itos: list[str], prompts: list[str], subset) -> dict:
    """What the slider shows for one set of weights: prompt attention, atlas shares, knock-out perplexities."""
    from .heads import atlas, knockout

    model.eval()
    result = atlas(model, subset, itos)
    result.pop("_scores")
    ko = knockout(model, subset)
    return {
        "prompts": [prompt_attention(model, itos, p) for p in prompts],
        "atlas": [
            {
                "head": h["head"],
                "share": h["share"],
                "signature": h["signature"],
                "mean_distance": h["mean_distance"],
            }
            for h in result["heads"]
        ],
        "uniform": result["uniform"],
        "perplexity": ko["all"]["test_perplexity"],
        "knockout": {
            name: {
                "test_perplexity": row["test_perplexity"],
                "perplexity_change": row["perplexity_change"],
            }
            for name, row in ko.items()
            if name == "all" or name.startswith("without_")
        },
    }


def state_sha256(state: dict) -> str:
    h = hashlib.sha256()
    for k in sorted(state):
        h.update(k.encode())
        h.update(state[k].detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def measure_snapshot(
    corpus, folder: Path, update: int, prompts: list[str], windows
) -> dict:
    """One snapshot's numbers, kept beside it (``measured-<update>.json``) for as long as weights,
    prompts and subset stay the same, so measuring can start while the rerun still trains."""
    state = torch.load(snapshot_path(folder, update), weights_only=True)
    key = {
        "weights_sha256": state_sha256(state),
        "prompts": list(prompts),
        "windows": len(windows),
    }
    cache = Path(folder) / f"measured-{update:05d}.json"
    if cache.is_file():
        saved = json.loads(cache.read_text())
        if saved.get("key") == key:
            return saved["entry"]
    model = get_spec(MODEL).build(len(corpus.vocab), corpus.T)
    model.load_state_dict(state)
    entry = {
        "update": update,
        "weights_sha256": key["weights_sha256"],
        **measure_model(model, corpus.vocab.itos, prompts, windows),
    }
    atomic.write_json(cache, {"key": key, "entry": entry})
    return entry


def measure(
    corpus,
    folder: Path,
    rerun: dict,
    prompts: list[str],
    shipped: dict | None = None,
    snapshots: tuple[int, ...] = SNAPSHOT_UPDATES,
    subset: int = SUBSET,
    log=print,
) -> dict:
    """The artefact: one entry per snapshot, plus the rerun's and (if given) the shipped run's test perplexity."""
    from .heads import KINDS

    windows = _FirstWindows(corpus.windows["test"], subset)
    entries = []
    for update in snapshots:
        entry = measure_snapshot(corpus, folder, update, prompts, windows)
        entries.append(entry)
        log(
            f"snapshot {update}: subset perplexity {entry['perplexity']:.2f}, signatures "
            f"{', '.join(h['signature'] for h in entry['atlas'])}"
        )
    out = {
        "schema": SCHEMA,
        "model": MODEL,
        "seed": rerun["seed"],
        "updates": rerun["updates"],
        "batch_size": rerun["batch_size"],
        "snapshots": entries,
        "prompts": list(prompts),
        "subset": {
            "split": "test",
            "windows": len(windows),
            "which": f"the first {len(windows):,} test windows",
        },
        "rerun": {
            k: rerun[k]
            for k in (
                "best_update",
                "val_loss",
                "test_loss",
                "test_perplexity",
                "train_seconds",
                "threads",
                "trace",
            )
        },
        "kinds": KINDS,
    }
    if shipped is not None:
        out["shipped"] = shipped
        out["rerun"]["reproduces_shipped"] = math.isclose(
            rerun["test_perplexity"], shipped["test_perplexity"], rel_tol=1e-9
        )
    return out


def shipped_run(evidence: dict, seed: int = PRESET_SEED) -> dict | None:
    for r in evidence.get("runs", []):
        if r["model"] == MODEL and r["seed"] == seed:
            return {
                k: r[k]
                for k in (
                    "best_update",
                    "val_loss",
                    "test_loss",
                    "test_perplexity",
                    "train_seconds",
                )
            }
    return None


def build(out_dir, runs: Path = Path("runs"), data=None, log=print) -> Path:
    """The stage: rerun (or reuse) the snapshot training, measure every snapshot, write head_growth.json.

    The rerun trains with the settings evidence.json records (``TrainConfig()``
    for the shipped protocol; a tiny protocol's rerun is as tiny as its runs).
    """
    from .corpus import corpus_of_evidence

    assets = Artefacts(out_dir)
    if not assets.evidence.is_file():
        raise FileNotFoundError(
            f"{assets.evidence} not found: run `python -m export evidence` first"
        )
    evidence = json.loads(assets.evidence.read_text())
    torch.set_num_threads(1)
    corpus = corpus_of_evidence(evidence, data)
    cfg = TrainConfig.of_protocol(evidence["protocol"])
    snapshots = snapshots_for(cfg.updates)
    folder = rerun_folder(runs)
    rerun = train_with_snapshots(corpus, folder, cfg, snapshots=snapshots, log=log)
    prompts = [evidence["preset"]["prompt"], *PROMPTS]
    shipped = shipped_run(evidence)
    result = measure(
        corpus, folder, rerun, prompts, shipped, snapshots=snapshots, log=log
    )
    path = atomic.write_json(assets.head_growth, result)
    log(f"wrote {path}")
    return path


def stage(ctx) -> None:
    build(ctx.out, runs=ctx.runs, data=getattr(ctx.args, "data", None))


def command(args) -> None:
    from .cli_checks import check_out

    check_out(args)
    build(Path(args.out), runs=Path(args.runs), data=args.data)
