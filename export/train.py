"""One training run, read top to bottom: the config, the learning-rate schedule, evaluation, the loop.

Per run: batches of ``batch_size`` windows drawn with replacement from the
training windows, ``updates`` AdamW updates with the same settings for every
model, validation loss on a fixed selection slice every ``eval_every``
updates, the best checkpoint by validation loss kept (``Best``), and the test
loss of that frozen checkpoint over all test windows. A seed sets the initial
weights and the batch draws; the data split and the vocabulary are shared.
The command line's defaults are ``TrainConfig``'s (``python -m export train``).

Training runs on ``device`` (``export/device.py``: ``auto`` takes CUDA, then
Apple's MPS, then the CPU); the device and its name are recorded with every
run. The protocol around the runs (every model x seed, resumable run folders,
aggregates) is ``export/protocol.py``.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field

import torch
from torch import nn
from tqdm import tqdm

from .corpus import Corpus
from .defaults import SEEDS
from .device import device_description
from .models import MODEL_NAMES, count_parameters, get_spec, loss_fn
from .windows import WindowSet


# -----------------------------------------------------------------------------
# config: every setting of a run (the CLI's defaults are these)


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
        for name in (
            "updates",
            "batch_size",
            "eval_every",
            "selection_windows",
            "eval_batch",
        ):
            if getattr(self, name) < 1:
                raise ValueError(
                    f"{name} must be at least 1, not {getattr(self, name)}"
                )
        if not self.seeds:
            raise ValueError("give at least one seed")
        if not self.models:
            raise ValueError("give at least one model")
        for name in self.models:
            get_spec(name)

    def optimizer_description(self) -> dict:
        return {
            "name": "AdamW",
            "lr": self.lr,
            "betas": list(self.betas),
            "weight_decay": self.weight_decay,
            "schedule": f"linear warm-up over {self.warmup} updates, then cosine decay to "
            f"{self.min_lr_ratio:g} x lr at the last update",
            "grad_clip_norm": self.grad_clip,
        }

    @classmethod
    def of_protocol(cls, protocol: dict) -> TrainConfig:
        """The config that evidence.json's ``protocol`` section records, to rerun it."""
        optimizer = protocol["optimizer"]
        cfg = cls(
            updates=protocol["updates"],
            batch_size=protocol["batch_size"],
            seeds=tuple(protocol["seeds"]),
            models=tuple(protocol["models"]),
            lr=optimizer["lr"],
            betas=tuple(optimizer["betas"]),
            weight_decay=optimizer["weight_decay"],
            grad_clip=optimizer["grad_clip_norm"],
            eval_every=protocol["eval_every"],
            selection_windows=protocol["selection_windows"],
        )
        if cfg.optimizer_description() != optimizer:
            raise ValueError(
                "evidence.json's optimiser differs from this code's "
                f"({optimizer['schedule']}); rebuild it with `python -m export all`"
            )
        return cfg

    def run_key(self, name: str) -> dict:
        """The settings a finished run of model ``name`` must have been trained with to be reused."""
        d = asdict(self)
        for k in ("seeds", "models", "eval_batch"):
            d.pop(k)
        spec = get_spec(name)
        return {**d, "d_model": spec.d_model, "hidden": spec.hidden}


# -----------------------------------------------------------------------------
# learning-rate schedule: linear warm-up, then cosine decay


def learning_rate(cfg: TrainConfig, update: int) -> float:
    """Learning rate for 0-based update ``update``."""
    if update < cfg.warmup:
        return cfg.lr * (update + 1) / cfg.warmup
    progress = (update - cfg.warmup) / max(1, cfg.updates - cfg.warmup - 1)
    cosine = 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))
    return cfg.lr * (cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * cosine)


# -----------------------------------------------------------------------------
# evaluation: the fixed selection slice and the mean loss over windows


def set_learning_rate(
    opt: torch.optim.Optimizer, cfg: TrainConfig, update: int
) -> None:
    for group in opt.param_groups:
        group["lr"] = learning_rate(cfg, update)


def selection_slice(windows: WindowSet, cfg: TrainConfig) -> torch.Tensor:
    """The fixed validation windows every checkpoint is judged on."""
    g = torch.Generator().manual_seed(cfg.selection_seed)
    order = torch.randperm(len(windows), generator=g)
    return order[: cfg.selection_windows].sort().values


# lesson: mean-loss
@torch.no_grad()
def mean_loss(
    model: nn.Module,
    windows: WindowSet,
    index: torch.Tensor | None = None,
    batch: int = 2048,
) -> float:
    """Average next-token cross-entropy (natural log) over the chosen windows."""
    model.eval()
    if index is None:
        index = torch.arange(len(windows))
    total, count = 0.0, 0
    device = next(model.parameters()).device
    for start in range(0, len(index), batch):
        x, y = (t.to(device) for t in windows.batch(index[start : start + batch]))
        total += nn.functional.cross_entropy(model(x), y, reduction="sum").item()
        count += len(y)
    model.train()
    return total / count


# -----------------------------------------------------------------------------
# the loop: one update, then the run (train, select on validation, test)


def make_optimizer(
    model: nn.Module, cfg: TrainConfig, device: torch.device | str = "cpu"
) -> torch.optim.Optimizer:
    # fused AdamW where torch has it (CPU, CUDA); its numbers are the same run to run on one machine
    return torch.optim.AdamW(
        model.parameters(),
        lr=cfg.lr,
        betas=cfg.betas,
        weight_decay=cfg.weight_decay,
        fused=torch.device(device).type in ("cpu", "cuda"),
    )


def draw_batch(
    train: WindowSet, cfg: TrainConfig, batches: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """``batch_size`` training windows drawn with replacement, from the run's own generator (on the CPU)."""
    return train.batch(torch.randint(len(train), (cfg.batch_size,), generator=batches))


def state_of(model: nn.Module) -> dict:
    """A copy of the weights on the CPU, kept while training goes on."""
    return {k: t.detach().cpu().clone() for k, t in model.state_dict().items()}


# lesson: train-step
def train_step(
    model: nn.Module,
    opt: torch.optim.Optimizer,
    x: torch.Tensor,
    y: torch.Tensor,
    grad_clip: float,
) -> torch.Tensor:
    """One update: the loss on the batch, its gradients (clipped to norm
    ``grad_clip``), one optimizer step."""
    loss = loss_fn(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    opt.step()
    return loss


# lesson end


@dataclass
class Best:
    """The checkpoint kept so far: the lowest validation loss on the selection slice."""

    val_loss: float = math.inf
    update: int = 0
    state: dict | None = None


@dataclass
class RunResult:
    """What one run measured; ``runs/<model>-seed<seed>/result.json`` holds it."""

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
    # [update, selection-slice val loss]
    trace: list[list[float]] = field(default_factory=list)
    final_train_loss: float = float("nan")
    device: dict = field(default_factory=dict)
    key: dict = field(default_factory=dict)
    started: float = (
        0.0  # wall-clock time (Unix seconds) the run began and ended (0: not recorded)
    )
    finished: float = 0.0

    def record(self) -> dict:
        """The run as the evidence and the head sweep keep it: every measured field. When it ran
        (``started``, ``finished``) stays in its result.json, where parallel runs are checked."""
        out = asdict(self)
        del out["started"], out["finished"]
        return out


def train_run(
    name: str,
    seed: int,
    corpus: Corpus,
    cfg: TrainConfig,
    progress: bool = True,
    device: torch.device | str = "cpu",
    hooks: RunHooks | None = None,
) -> tuple[RunResult, nn.Module]:
    """One model, one seed: train, select on validation, test. Returns the result and the selected model.

    The weights are initialised on the CPU and the batches drawn there, so a
    seed starts from the same point on every device; ``hooks`` may resume a run and see every update.
    """
    C, T = len(corpus.vocab), corpus.T
    device = torch.device(device)
    torch.manual_seed(seed)
    model = get_spec(name).build(C, T).to(device)
    batches = torch.Generator().manual_seed(seed)
    opt = make_optimizer(model, cfg, device)
    train, val = corpus.windows["train"], corpus.windows["validation"]
    sel = selection_slice(val, cfg)
    hooks = hooks or RunHooks()
    best, trace, recent, first, before = hooks.resume(model, opt, batches) or (
        Best(),
        [],
        [],
        0,
        0.0,
    )
    started = time.time()
    start = time.perf_counter()
    bar = tqdm(
        range(first, cfg.updates),
        desc=f"{name} seed {seed}",
        unit="upd",
        disable=not progress,
        mininterval=2,
    )
    for update in bar:
        set_learning_rate(opt, cfg, update)
        x, y = (t.to(device) for t in draw_batch(train, cfg, batches))
        loss = hooks.step(model, opt, x, y, cfg.grad_clip)
        recent = (recent + [loss.item()])[-50:]
        done = update + 1
        # lesson: select-checkpoint
        if done % cfg.eval_every == 0 or done == cfg.updates:
            v = mean_loss(model, val, sel, cfg.eval_batch)
            trace.append([done, v])
            if v < best.val_loss:
                best = Best(val_loss=v, update=done, state=state_of(model))
            # lesson end
            bar.set_postfix(
                train=f"{sum(recent) / len(recent):.3f}",
                val=f"{v:.3f}",
                best=f"{best.val_loss:.3f}@{best.update}",
            )
        hooks.after_update(
            done,
            model,
            opt,
            batches,
            (best, trace, recent, before + time.perf_counter() - start),
        )
    seconds = before + time.perf_counter() - start
    # the selected checkpoint, frozen, on every test window
    model.load_state_dict(best.state)
    test_loss = mean_loss(model, corpus.windows["test"], batch=cfg.eval_batch)
    result = RunResult(
        model=name,
        seed=seed,
        parameters=count_parameters(model),
        best_update=best.update,
        val_loss=best.val_loss,
        test_loss=test_loss,
        test_perplexity=math.exp(test_loss),
        train_seconds=seconds,
        updates=cfg.updates,
        batch_size=cfg.batch_size,
        trace=trace,
        final_train_loss=sum(recent) / max(1, len(recent)),
        device=device_description(device),
        key={"corpus": corpus.key(), **cfg.run_key(name)},
        started=started,
        finished=time.time(),
    )
    return result, model


class RunHooks:
    """What a caller adds to ``train_run`` without a loop of its own (export/head_growth.py: snapshots, resume).

    The plain run uses these: it starts afresh, takes ``train_step`` and keeps
    nothing along the way.
    """

    def resume(
        self, model: nn.Module, opt: torch.optim.Optimizer, batches: torch.Generator
    ) -> tuple | None:
        """Restore an interrupted run into ``model``, ``opt`` and ``batches``; return
        ``(best, trace, recent, update, seconds)`` to carry on from, or None to start afresh."""
        return None

    def step(
        self,
        model: nn.Module,
        opt: torch.optim.Optimizer,
        x: torch.Tensor,
        y: torch.Tensor,
        grad_clip: float,
    ) -> torch.Tensor:
        return train_step(model, opt, x, y, grad_clip)

    def after_update(
        self,
        done: int,
        model: nn.Module,
        opt: torch.optim.Optimizer,
        batches: torch.Generator,
        carry: tuple,
    ) -> None:
        """Called after update ``done`` (its evaluation included) with ``(best, trace, recent, seconds)``."""
