"""Train, select and test the three models over several seeds.

Per run: batches of ``batch_size`` windows drawn with replacement from the
training windows, ``updates`` AdamW updates with the same settings for every
model, validation loss on a fixed selection slice every ``eval_every``
updates, the best checkpoint by validation loss kept, and the test loss of
that frozen checkpoint over all test windows. A seed sets the initial weights
and the batch draws; the data split and the vocabulary are shared.

Each run is one command writing one folder, ``runs/<model>-seed<seed>/``
(``best.pt``, the selected state dict, then ``result.json``, each written
atomically): ``python -m export train --models M --seeds S``. A finished run
(same data and settings, its checkpoint loads and matches its result file) is
skipped, so an interrupted protocol resumes where it stopped. Runs in parallel
come from an engine that already exists: ``make -j3 models`` runs three at a
time (one Make target per run), a cluster runs the same command per run.

Training runs on ``device``: ``auto`` takes CUDA, then Apple's MPS, then the
CPU. The device and its name are recorded with every run.
"""
from __future__ import annotations

import json
import math
import platform
import statistics
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from torch import nn
from tqdm import tqdm

from . import atomic
from .checkpoints import CheckpointError, load_full, save_full
from .corpus import Corpus
from .artefacts import run_dir
from .defaults import SEEDS
from .models import MODEL_NAMES, count_parameters, get_spec, loss_fn
from .windows import WindowSet

DEVICES = ("auto", "cpu", "cuda", "mps")


@dataclass(frozen=True)
class TrainConfig:
    updates: int = 6000
    batch_size: int = 512
    seeds: tuple[int, ...] = SEEDS
    models: tuple[str, ...] = MODEL_NAMES
    lr: float = 2e-3
    betas: tuple[float, float] = (0.9, 0.98)
    weight_decay: float = 0.01
    warmup: int = 200
    min_lr_ratio: float = 0.1
    grad_clip: float = 1.0
    eval_every: int = 200
    selection_windows: int = 8192
    selection_seed: int = 0
    eval_batch: int = 2048

    def __post_init__(self) -> None:
        for name in ("updates", "batch_size", "eval_every", "selection_windows", "eval_batch"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")
        if not self.seeds:
            raise ValueError("give at least one seed")
        if not self.models:
            raise ValueError("give at least one model")
        for name in self.models:
            get_spec(name)

    def optimizer_description(self) -> dict:
        return {
            "name": "AdamW", "lr": self.lr, "betas": list(self.betas), "weight_decay": self.weight_decay,
            "schedule": f"linear warm-up over {self.warmup} updates, then cosine decay to "
                        f"{self.min_lr_ratio:g} x lr at the last update",
            "grad_clip_norm": self.grad_clip,
        }

    def run_key(self, name: str) -> dict:
        """The settings a finished run of model ``name`` must have been trained with to be reused."""
        d = asdict(self)
        for k in ("seeds", "models", "eval_batch"):
            d.pop(k)
        spec = get_spec(name)
        return {**d, "d_model": spec.d_model, "hidden": spec.hidden}


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def resolve_device(choice: str = "auto") -> torch.device:
    """``auto``: CUDA, then Apple's MPS, then the CPU; a named device must be present."""
    mps = getattr(torch.backends, "mps", None)
    available = {"cpu": True, "cuda": torch.cuda.is_available(), "mps": bool(mps and mps.is_available())}
    if choice == "auto":
        return torch.device(next(d for d in ("cuda", "mps", "cpu") if available[d]))
    if choice not in available:
        raise ValueError(f"unknown device {choice!r}; choose one of {', '.join(DEVICES)}")
    if not available[choice]:
        raise ValueError(f"this machine's PyTorch has no {choice} device; use --device auto or cpu")
    return torch.device(choice)


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    if device.type == "mps":
        try:  # the chip's name, e.g. "Apple M2 Max"
            return subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True, text=True,
                                  timeout=5).stdout.strip() or "Apple GPU (MPS)"
        except (OSError, subprocess.SubprocessError):
            return "Apple GPU (MPS)"
    return cpu_name()


def device_description(device: torch.device | str = "cpu") -> dict:
    device = torch.device(device)
    return {"device": device.type, "name": device_name(device), "cpu": cpu_name(),
            "threads": torch.get_num_threads(), "torch": torch.__version__, "platform": platform.platform()}


def learning_rate(cfg: TrainConfig, update: int) -> float:
    """Learning rate for 0-based update ``update``."""
    if update < cfg.warmup:
        return cfg.lr * (update + 1) / cfg.warmup
    progress = (update - cfg.warmup) / max(1, cfg.updates - cfg.warmup - 1)
    cosine = 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))
    return cfg.lr * (cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * cosine)


def selection_slice(windows: WindowSet, cfg: TrainConfig) -> torch.Tensor:
    """The fixed validation windows every checkpoint is judged on."""
    g = torch.Generator().manual_seed(cfg.selection_seed)
    order = torch.randperm(len(windows), generator=g)
    return order[: cfg.selection_windows].sort().values


# lesson: mean-loss
@torch.no_grad()
def mean_loss(model: nn.Module, windows: WindowSet, index: torch.Tensor | None = None, batch: int = 2048) -> float:
    """Average next-token cross-entropy (natural log) over the chosen windows."""
    model.eval()
    if index is None:
        index = torch.arange(len(windows))
    total, count = 0.0, 0
    device = next(model.parameters()).device
    for start in range(0, len(index), batch):
        x, y = (t.to(device) for t in windows.batch(index[start:start + batch]))
        total += nn.functional.cross_entropy(model(x), y, reduction="sum").item()
        count += len(y)
    model.train()
    return total / count


@dataclass
class RunResult:
    model: str
    seed: int
    parameters: int
    best_update: int
    val_loss: float
    test_loss: float
    test_perplexity: float
    train_seconds: float
    updates: int
    batch_size: int
    trace: list[list[float]] = field(default_factory=list)  # [update, selection-slice val loss]
    final_train_loss: float = float("nan")
    device: dict = field(default_factory=dict)
    key: dict = field(default_factory=dict)
    started: float = 0.0  # wall-clock time (Unix seconds) the run began and ended (0: not recorded)
    finished: float = 0.0


@dataclass
class Best:
    """The checkpoint kept so far: the lowest validation loss on the selection slice."""

    val_loss: float = math.inf
    update: int = 0
    state: dict | None = None


# lesson: train-step
def train_step(model: nn.Module, opt: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor,
               grad_clip: float) -> torch.Tensor:
    """One update: the loss on the batch, its gradients (clipped to norm ``grad_clip``), one optimizer step."""
    loss = loss_fn(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    opt.step()
    return loss
# lesson end


def train_run(name: str, seed: int, corpus: Corpus, cfg: TrainConfig, progress: bool = True,
              device: torch.device | str = "cpu") -> tuple[RunResult, nn.Module]:
    """One model, one seed: train, select on validation, test. Returns the result and the selected model.

    The weights are initialised on the CPU and the batches drawn there, so a
    seed starts from the same point on every device.
    """
    C, T = len(corpus.vocab), corpus.T
    device = torch.device(device)
    torch.manual_seed(seed)
    model = get_spec(name).build(C, T).to(device)
    batches = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=cfg.betas, weight_decay=cfg.weight_decay,
                            fused=device.type in ("cpu", "cuda"))
    train, val = corpus.windows["train"], corpus.windows["validation"]
    sel = selection_slice(val, cfg)
    best = Best()
    trace, recent = [], []
    started = time.time()
    start = time.perf_counter()
    bar = tqdm(range(cfg.updates), desc=f"{name} seed {seed}", unit="upd", disable=not progress, mininterval=2)
    for update in bar:
        for group in opt.param_groups:
            group["lr"] = learning_rate(cfg, update)
        x, y = (t.to(device) for t in train.batch(torch.randint(len(train), (cfg.batch_size,), generator=batches)))
        loss = train_step(model, opt, x, y, cfg.grad_clip)
        recent = (recent + [loss.item()])[-50:]
        done = update + 1
        # lesson: select-checkpoint
        if done % cfg.eval_every == 0 or done == cfg.updates:
            v = mean_loss(model, val, sel, cfg.eval_batch)
            trace.append([done, v])
            if v < best.val_loss:
                best = Best(v, done, {k: t.detach().cpu().clone() for k, t in model.state_dict().items()})
            # lesson end
            bar.set_postfix(train=f"{sum(recent) / len(recent):.3f}", val=f"{v:.3f}",
                            best=f"{best.val_loss:.3f}@{best.update}")
    seconds = time.perf_counter() - start
    model.load_state_dict(best.state)
    test_loss = mean_loss(model, corpus.windows["test"], batch=cfg.eval_batch)
    result = RunResult(
        model=name, seed=seed, parameters=count_parameters(model), best_update=best.update, val_loss=best.val_loss,
        test_loss=test_loss, test_perplexity=math.exp(test_loss), train_seconds=seconds,
        updates=cfg.updates, batch_size=cfg.batch_size, trace=trace,
        final_train_loss=sum(recent) / max(1, len(recent)), device=device_description(device),
        key={"corpus": corpus.key(), **cfg.run_key(name)}, started=started, finished=time.time(),
    )
    return result, model


def check_runs_folder(runs: Path) -> None:
    """A --runs path must be a folder or not exist yet (nor sit under a file)."""
    for folder in (Path(runs), *Path(runs).parents):
        if folder.exists():
            if not folder.is_dir():
                raise ValueError(f"{folder} is a file, so {runs} cannot be the runs folder; choose another --runs")
            return


def load_finished(runs: Path, name: str, seed: int, corpus: Corpus, cfg: TrainConfig, log=print) -> RunResult | None:
    """The run's result when it is finished: its result file matches these settings and its checkpoint loads and fits."""
    folder = run_dir(runs, name, seed)
    path, ckpt = folder / "result.json", folder / "best.pt"
    if not path.is_file() or not ckpt.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        result = RunResult(**data)
    except (json.JSONDecodeError, TypeError) as exc:
        log(f"note: ignoring unreadable {path} ({exc}); the run will be redone")
        return None
    if result.key != {"corpus": corpus.key(), **json.loads(json.dumps(cfg.run_key(name)))}:
        return None
    try:
        model = load_full(ckpt)
    except CheckpointError as exc:
        log(f"note: {exc}; the run will be redone")
        return None
    spec = get_spec(name)
    problems = [what for what, bad in (
        ("another model", model.spec.name != name or not model.spec.same_architecture(spec)),
        ("another vocabulary or context", (model.C, model.T) != (len(corpus.vocab), corpus.T)),
        ("another parameter count", count_parameters(model) != result.parameters),
    ) if bad]
    if problems:
        log(f"note: {ckpt} holds {' and '.join(problems)} than {path.name} says; the run will be redone")
        return None
    return result


def train_or_reuse(name: str, seed: int, corpus: Corpus, cfg: TrainConfig, runs: Path, progress: bool = True,
                   log=print, device: torch.device | str = "cpu") -> RunResult:
    """One run: reused when finished, otherwise trained and written (checkpoint first, then its result)."""
    done = load_finished(runs, name, seed, corpus, cfg, log)
    if done is not None:
        log(f"{name} seed {seed}: already trained (test perplexity {done.test_perplexity:.2f}), skipped")
        return done
    folder = run_dir(runs, name, seed)
    result, model = train_run(name, seed, corpus, cfg, progress, device)
    save_full(folder / "best.pt", get_spec(name), model, corpus.vocab.fingerprint())
    atomic.write_json(folder / "result.json", asdict(result))  # last: a run without it is not finished
    log(f"{name} seed {seed}: best update {result.best_update}, val {result.val_loss:.4f}, "
        f"test perplexity {result.test_perplexity:.2f}, {result.train_seconds:.0f} s")
    return result


def run_protocol(corpus: Corpus, cfg: TrainConfig, runs: Path, progress: bool = True, log=print,
                 device: torch.device | str = "cpu") -> list[RunResult]:
    """Every model for every seed, seed by seed so the seed-11 models are ready first (one after another)."""
    check_runs_folder(runs)
    return [train_or_reuse(name, seed, corpus, cfg, runs, progress, log, device)
            for seed in cfg.seeds for name in cfg.models]


def aggregate(results: list[RunResult]) -> dict:
    """Mean and sample sd (n - 1) per model; each run's perplexity is exp(its loss) before averaging."""
    out = {}
    for name in dict.fromkeys(r.model for r in results):
        rs = [r for r in results if r.model == name]
        ppl = [r.test_perplexity for r in rs]
        loss = [r.test_loss for r in rs]
        secs = [r.train_seconds for r in rs]
        sd = (lambda xs: statistics.stdev(xs) if len(xs) > 1 else 0.0)
        out[name] = {
            "runs": len(rs), "seeds": [r.seed for r in rs], "parameters": rs[0].parameters,
            "perplexity_mean": statistics.fmean(ppl), "perplexity_sd": sd(ppl),
            "test_loss_mean": statistics.fmean(loss), "test_loss_sd": sd(loss),
            "train_seconds_mean": statistics.fmean(secs), "train_seconds_sd": sd(secs),
        }
    return out


def relative_change(aggregates: dict, new: str | None = None, old: str | None = None) -> float | None:
    """(new - old) / old in mean perplexity; by default the most-heads model against the one-head one."""
    from .models import most_heads_model, single_head_model

    new, old = new or most_heads_model().name, old or single_head_model().name
    if new not in aggregates or old not in aggregates:
        return None
    a, b = aggregates[new]["perplexity_mean"], aggregates[old]["perplexity_mean"]
    return (a - b) / b
