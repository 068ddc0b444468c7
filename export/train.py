"""Train, select and test the three models over several seeds.

Per run: batches of ``batch_size`` windows drawn with replacement from the
training windows, ``updates`` AdamW updates with the same settings for every
model, validation loss on a fixed selection slice every ``eval_every``
updates, the best checkpoint by validation loss kept, and the test loss of
that frozen checkpoint over all test windows. A seed sets the initial weights
and the batch draws; the data split and the vocabulary are shared.

Finished runs are saved under ``runs/<model>-seed<seed>/`` (result.json and the
selected state dict) and skipped when the protocol is repeated with the same
data and settings, so an interrupted protocol resumes where it stopped.
"""
from __future__ import annotations

import copy
import json
import math
import os
import platform
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from torch import nn
from tqdm import tqdm

from . import atomic
from .corpus import Corpus
from .models import MODEL_NAMES, build_model
from .multihead import count_parameters, loss_fn
from .windows import WindowSet


@dataclass(frozen=True)
class TrainConfig:
    updates: int = 6000
    batch_size: int = 512
    seeds: tuple[int, ...] = (11, 29, 47)
    models: tuple[str, ...] = MODEL_NAMES
    d_model: int = 64
    hidden: int = 256
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

    def optimizer_description(self) -> dict:
        return {
            "name": "AdamW", "lr": self.lr, "betas": list(self.betas), "weight_decay": self.weight_decay,
            "schedule": f"linear warm-up over {self.warmup} updates, then cosine decay to "
                        f"{self.min_lr_ratio:g} x lr at the last update",
            "grad_clip_norm": self.grad_clip,
        }

    def run_key(self) -> dict:
        d = asdict(self)
        for k in ("seeds", "models", "eval_batch"):
            d.pop(k)
        return d


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def device_description() -> dict:
    return {"device": "cpu", "cpu": cpu_name(), "threads": torch.get_num_threads(),
            "torch": torch.__version__, "platform": platform.platform()}


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
    for start in range(0, len(index), batch):
        x, y = windows.batch(index[start:start + batch])
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


def train_run(name: str, seed: int, corpus: Corpus, cfg: TrainConfig, progress: bool = True) -> tuple[RunResult, dict]:
    """One model, one seed: train, select on validation, test. Returns the result and the chosen state dict."""
    C, T = len(corpus.vocab), corpus.T
    torch.manual_seed(seed)
    model = build_model(name, C, T, d_model=cfg.d_model, hidden=cfg.hidden)
    batches = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=cfg.betas, weight_decay=cfg.weight_decay, fused=True)
    train, val = corpus.windows["train"], corpus.windows["validation"]
    sel = selection_slice(val, cfg)
    best = (math.inf, 0, None)
    trace, recent = [], []
    start = time.perf_counter()
    bar = tqdm(range(cfg.updates), desc=f"{name} seed {seed}", unit="upd", disable=not progress, mininterval=2)
    for update in bar:
        for group in opt.param_groups:
            group["lr"] = learning_rate(cfg, update)
        # lesson: train-step
        x, y = train.batch(torch.randint(len(train), (cfg.batch_size,), generator=batches))
        loss = loss_fn(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        # lesson end
        recent = (recent + [loss.item()])[-50:]
        done = update + 1
        # lesson: select-checkpoint
        if done % cfg.eval_every == 0 or done == cfg.updates:
            v = mean_loss(model, val, sel, cfg.eval_batch)
            trace.append([done, v])
            if v < best[0]:
                best = (v, done, copy.deepcopy(model.state_dict()))
            # lesson end
            bar.set_postfix(train=f"{sum(recent) / len(recent):.3f}", val=f"{v:.3f}", best=f"{best[0]:.3f}@{best[1]}")
    seconds = time.perf_counter() - start
    model.load_state_dict(best[2])
    test_loss = mean_loss(model, corpus.windows["test"], batch=cfg.eval_batch)
    result = RunResult(
        model=name, seed=seed, parameters=count_parameters(model), best_update=best[1], val_loss=best[0],
        test_loss=test_loss, test_perplexity=math.exp(test_loss), train_seconds=seconds,
        updates=cfg.updates, batch_size=cfg.batch_size, trace=trace,
        final_train_loss=sum(recent) / max(1, len(recent)), device=device_description(),
        key={"corpus": corpus.key(), **cfg.run_key()},
    )
    return result, best[2]


def run_dir(runs: Path, name: str, seed: int) -> Path:
    return Path(runs) / f"{name}-seed{seed}"


def load_finished(runs: Path, name: str, seed: int, corpus: Corpus, cfg: TrainConfig) -> RunResult | None:
    path = run_dir(runs, name, seed) / "result.json"
    if not path.is_file() or not (path.parent / "best.pt").is_file():
        return None
    try:
        data = json.loads(path.read_text())
        result = RunResult(**data)
    except (json.JSONDecodeError, TypeError) as exc:
        print(f"note: ignoring unreadable {path} ({exc}); the run will be redone")
        return None
    if result.key != {"corpus": corpus.key(), **json.loads(json.dumps(cfg.run_key()))}:
        return None
    return result


def _claim(folder: Path) -> bool:
    """Mark a run as taken so that parallel protocol processes share the work."""
    folder.mkdir(parents=True, exist_ok=True)
    lock = folder / "claimed.pid"
    try:
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        try:
            os.kill(int(lock.read_text() or 0), 0)
            return False  # its owner is alive and training it
        except (ValueError, ProcessLookupError, PermissionError):
            lock.unlink(missing_ok=True)  # left by a process that died
            return _claim(folder)
    with os.fdopen(fd, "w") as f:
        f.write(str(os.getpid()))
    return True


def run_protocol(corpus: Corpus, cfg: TrainConfig, runs: Path, progress: bool = True, log=print) -> list[RunResult]:
    """Every model for every seed, seed by seed so the seed-11 models are ready first.

    Several processes may run this at once on the same ``runs`` folder: each
    run is claimed by one of them, and every process waits for the others'
    runs before it returns.
    """
    results, waiting = {}, []
    for seed in cfg.seeds:
        for name in cfg.models:
            done = load_finished(runs, name, seed, corpus, cfg)
            if done is not None:
                log(f"{name} seed {seed}: already trained (test perplexity {done.test_perplexity:.2f}), skipped")
                results[name, seed] = done
                continue
            if not _claim(run_dir(runs, name, seed)):
                log(f"{name} seed {seed}: being trained by another process")
                waiting.append((name, seed))
                continue
            try:
                result, state = train_run(name, seed, corpus, cfg, progress)
                folder = run_dir(runs, name, seed)
                atomic.save_torch(folder / "best.pt", {"config": build_model(name, len(corpus.vocab), corpus.T,
                                                                             cfg.d_model, cfg.hidden).config(),
                                                       "state_dict": state})
                atomic.write_json(folder / "result.json", asdict(result))
            finally:
                (run_dir(runs, name, seed) / "claimed.pid").unlink(missing_ok=True)
            log(f"{name} seed {seed}: best update {result.best_update}, val {result.val_loss:.4f}, "
                f"test perplexity {result.test_perplexity:.2f}, {result.train_seconds:.0f} s")
            results[name, seed] = result
    for name, seed in waiting:
        while (found := load_finished(runs, name, seed, corpus, cfg)) is None:
            if _claim(run_dir(runs, name, seed)):  # its owner died: finish it here
                (run_dir(runs, name, seed) / "claimed.pid").unlink(missing_ok=True)
                return run_protocol(corpus, cfg, runs, progress, log)
            time.sleep(10)
        results[name, seed] = found
    return [results[name, seed] for seed in cfg.seeds for name in cfg.models]


def load_checkpoint(path: str | os.PathLike) -> nn.Module:
    """Rebuild a model from a saved ``best.pt``; a damaged file gives a clear error."""
    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
        cfg = dict(saved["config"])
        kind = cfg.pop("kind")
        if kind == "mlp":
            name = "mlp"
        else:
            name = "four_heads" if cfg.pop("heads") == 4 else "one_head"
        model = build_model(name, cfg["C"], cfg["T"], cfg["d_model"], cfg["hidden"])
        model.load_state_dict(saved["state_dict"])
    except FileNotFoundError:
        raise
    except Exception as exc:  # torch raises many kinds for a damaged file
        raise ValueError(f"checkpoint {path} is damaged or not a model checkpoint ({type(exc).__name__}: {exc})") from None
    model.eval()
    return model


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


def relative_change(aggregates: dict, new: str = "four_heads", old: str = "one_head") -> float | None:
    if new not in aggregates or old not in aggregates:
        return None
    a, b = aggregates[new]["perplexity_mean"], aggregates[old]["perplexity_mean"]
    return (a - b) / b
