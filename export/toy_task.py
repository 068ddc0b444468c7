"""A synthetic task one head cannot learn and two can: trained, measured, written down.

THE SETTING. A sequence of ``items`` slots and a final query slot. Each slot
has a tag (A, B or D for distractor) and a number in [0, 1); exactly one slot
is tagged A and one B, at random places, and the distractors hold random
numbers. A slot's row is tag row + position row + number x one learned row,
so a number enters every slot along the same direction, as a value feature
does. The keys are computed from the tag and position rows only: a slot is
found by what it is and where, and hands over its number, as page 1's toy
weighs river and fisherman by who they are. One attention layer reads the
sources from the query slot; the heads' messages are joined, mixed by W_O,
added to the query's row, and a ReLU hidden layer gives the outputs. One, two
and four heads split the same width ``d_model``, so every head count has
exactly the same parameters (checked).

THE TASKS AND WHY:

* ``pair``: report A's number and B's number. Whatever one head's weights,
  the numbers in its message add up along one direction to ONE weighted mean
  w a + (1 - w) b (+ the distractors' share): one number where two are
  needed. Two heads can each put their weight on one tag and hand over a and
  b separately. Expect a gap.
* ``mean``: report (a + b) / 2. Control: one head with weight 1/2 on each
  tag hands over exactly the answer. Expect no gap.
* ``single``: report a. Control the other way: one weighting is enough and
  narrower heads might hurt. Expect no gap.
* ``pair_keys_see_numbers``: ``pair`` as first built, with keys from the whole
  row. Expected a gap; one head learned it in some seeds: when the keys see
  the numbers, the weights depend on a and b, and the tag rows in the message
  tell the hidden layer those weights, a second channel past the one-number
  blend. Kept to show that one head can find such routes.

THE PILOTS, before this stage: values as rows of their own (an ordered pair
of A's and B's values as one of V * V classes; A and B on a random number of
slots; two marked slots in order of position), at widths 16-32. One head
learned each of them in some seeds, with spreads too large for a clear gap:
a row per value lets one head send a mixture that the hidden layer can
untangle. The page lists them.

THE PROTOCOL, the same for every head count and task: ``steps`` updates of
``batch`` fresh random sequences (seeded), AdamW, and the same tuning budget:
each learning rate of ``lr_grid`` is tried on the tuning seed, the one with
the best held-out score is kept and the evaluation seeds are trained with it.
The score is the share of held-out sequences solved (every number within
``TOLERANCE``), with the mean squared error beside it; per seed and as mean
and sample sd, with learning curves, the chance level (the best answer that
ignores the sequence) and each model's attention on a few held-out sequences.
Head counts are compared with one head paired by seed, as page 5 compares its
models (``head_gap``, ``export/paired.py``).

``build(out_dir, cfg)`` writes one JSON artefact (``Artefacts().toy_task``).
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from . import atomic, paired
from .artefacts import Artefacts

SCHEMA = "mha-toy-task/1"
TAGS = ("A", "B", "D", "?")  # D: distractor; "?": the query slot
TAG_A, TAG_B, TAG_D, TAG_Q = range(4)
TASKS = {
    "pair": "report A's number and B's number",
    "mean": "report the mean of A's and B's numbers",
    "single": "report A's number",
    "pair_keys_see_numbers": "report A's and B's numbers, with the numbers in the keys too",
}
WHY = {
    "pair": "a number reaches a head only along one learned direction, the same for every slot, so one head "
    "hands over one weighted mean w a + (1 \u2212 w) b: one number where two are needed; two heads can "
    "hand over a and b separately",
    "mean": "control: one head with weight 1/2 on A and on B hands over exactly the answer",
    "single": "control: one weighting (all on A) is enough; narrower heads might even hurt",
    "pair_keys_see_numbers": "the first version of the pair task: the keys also see the numbers, so the "
    "weights themselves depend on a and b and can carry them past the one-number blend",
}
EXPECT = {
    "pair": "gap",
    "mean": "no gap",
    "single": "no gap",
    "pair_keys_see_numbers": "gap",
}
TOLERANCE = (
    0.05  # a number counts as right within this much (numbers are uniform in [0, 1))
)
RULE = (
    "paired by seed: the difference in share solved (several heads minus one head) for every seed, its mean "
    "and a 95 % t-interval (mean \u00b1 t \u00d7 sd / \u221an, t from Student's t with n \u2212 1 degrees of "
    "freedom); a gap counts when the interval excludes zero"
)


@dataclass(frozen=True)
class ToyConfig:
    items: int = 12  # tagged slots before the query
    d_model: int = 16
    hidden: int = 64
    heads: tuple[int, ...] = (1, 2, 4)
    tasks: tuple[str, ...] = tuple(TASKS)
    steps: int = 400
    batch: int = 128
    lr_grid: tuple[float, ...] = (3e-3, 1e-2)
    tuning_seed: int = 0
    seeds: tuple[int, ...] = (1, 2, 3)
    heldout: int = 1024
    heldout_seed: int = 12345
    eval_every: int = 25
    examples: int = 3  # held-out examples whose attention is kept

    def __post_init__(self) -> None:
        bad = [t for t in self.tasks if t not in TASKS]
        if bad:
            raise ValueError(
                f"unknown toy task(s) {', '.join(bad)}; choose from {', '.join(TASKS)}"
            )
        for h in self.heads:
            if h < 1 or self.d_model % h:
                raise ValueError(
                    f"heads={h} must be at least 1 and divide d_model={self.d_model}"
                )
        if self.items < 2:
            raise ValueError("the task needs at least 2 items")
        for name in ("steps", "batch", "heldout", "eval_every"):
            if getattr(self, name) < 1:
                raise ValueError(
                    f"{name} must be at least 1, not {getattr(self, name)}"
                )
        if not self.seeds or not self.lr_grid:
            raise ValueError("give at least one seed and one learning rate")


def outputs(task: str) -> int:
    """How many numbers the model reports."""
    return 2 if task.startswith("pair") else 1


def make_batch(task: str, cfg: ToyConfig, n: int, generator: torch.Generator):
    """n sequences: tags [n, L], numbers [n, L] (the query slot's is 0) and targets.

    One slot is tagged A and one B, at random places; the others are distractors (D) with random numbers.
    Numbers are uniform in [0, 1).
    """
    L = cfg.items
    # a random permutation of the slots
    order = torch.argsort(torch.rand(n, L, generator=generator), dim=1)
    rank = torch.arange(L)[None]
    slot_tag = torch.where(
        rank == 0, TAG_A, torch.where(rank == 1, TAG_B, TAG_D)
    ).expand(n, L)
    tags = torch.empty(n, L, dtype=torch.long).scatter_(1, order, slot_tag)
    numbers = torch.rand(n, L, generator=generator)
    a = numbers.gather(1, order[:, :1])[:, 0]
    b = numbers.gather(1, order[:, 1:2])[:, 0]
    target = {
        "pair": torch.stack([a, b], 1),
        "pair_keys_see_numbers": torch.stack([a, b], 1),
        "mean": ((a + b) / 2)[:, None],
        "single": a[:, None],
    }[task]
    tags = torch.cat([tags, torch.full((n, 1), TAG_Q)], dim=1)
    numbers = torch.cat([numbers, torch.zeros(n, 1)], dim=1)
    return tags, numbers, target


class ToyAttention(nn.Module):
    """Embeddings, one attention layer read from the final slot, residual, ReLU hidden layer, outputs.

    A slot's row is its tag row + its position row + its number times one learned row (``number``): a
    number enters along the same direction whatever its slot. The keys are computed from the tag and
    position rows only (the number is what a slot hands over, not what it is found by), as page 1's toy
    weighs sources by who they are; ``keys_see_numbers`` computes them from the whole row instead.
    """

    def __init__(self, cfg: ToyConfig, heads: int, task: str):
        super().__init__()
        d, self.heads, self.head_dim = cfg.d_model, heads, cfg.d_model // heads
        self.keys_see_numbers = task == "pair_keys_see_numbers"
        self.tag = nn.Embedding(len(TAGS), d)
        self.position = nn.Embedding(cfg.items + 1, d)
        self.number = nn.Parameter(torch.randn(d) / math.sqrt(d))
        self.W_Q, self.W_K, self.W_V, self.W_O = (nn.Linear(d, d) for _ in range(4))
        self.hidden = nn.Linear(d, cfg.hidden)
        self.out = nn.Linear(cfg.hidden, outputs(task))

    def forward(self, tags, numbers, return_attention: bool = False):
        B, L = tags.shape
        where = self.tag(tags) + self.position(torch.arange(L))[None]
        rows = where + numbers[..., None] * self.number
        # [B, heads, L, dh]
        split = lambda t: t.reshape(B, -1, self.heads, self.head_dim).transpose(1, 2)
        q = split(self.W_Q(rows[:, -1:]))
        k = split(self.W_K(rows if self.keys_see_numbers else where))
        v = split(self.W_V(rows))
        # [B, heads, 1, L]
        A = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.head_dim), dim=-1)
        message = (A @ v).transpose(1, 2).reshape(B, -1)
        update = rows[:, -1] + self.W_O(message)
        out = self.out(F.relu(self.hidden(update)))
        return (out, A[:, :, 0]) if return_attention else out


def loss_of(task: str, out, target):
    return F.mse_loss(out, target)


def solved(task: str, out, target) -> torch.Tensor:
    """Per example: every number within TOLERANCE."""
    return ((out - target).abs() < TOLERANCE).all(dim=1)


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


@torch.no_grad()
def evaluate(model, heldout, task: str) -> tuple[float, float]:
    tags, numbers, target = heldout
    out = model(tags, numbers)
    return float(solved(task, out, target).float().mean()), float(
        loss_of(task, out, target)
    )


def chance(task: str, heldout) -> float:
    """The share solved by the best answer that ignores the sequence: the mean, 0.5, for every number."""
    _, _, target = heldout
    guess = torch.full_like(target, 0.5)  # the mean of uniform numbers in [0, 1)
    return float(solved(task, guess, target).float().mean())


def train_one(
    task: str, heads: int, seed: int, lr: float, cfg: ToyConfig, heldout
) -> tuple[dict, nn.Module]:
    torch.manual_seed(seed)
    model = ToyAttention(cfg, heads, task)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    batches = torch.Generator().manual_seed(1000 + seed)
    curve = [[0, *evaluate(model, heldout, task)]]
    for step in range(1, cfg.steps + 1):
        tags, numbers, target = make_batch(task, cfg, cfg.batch, batches)
        loss = loss_of(task, model(tags, numbers), target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % cfg.eval_every == 0 or step == cfg.steps:
            curve.append([step, *evaluate(model, heldout, task)])
    accuracy, loss = curve[-1][1], curve[-1][2]
    return {
        "seed": seed,
        "lr": lr,
        "accuracy": accuracy,
        "loss": loss,
        "curve": [[s, round(a, 5), round(l, 6)] for s, a, l in curve],
    }, model


def _sd(xs: list[float]) -> float:
    return statistics.stdev(xs) if len(xs) > 1 else 0.0


@torch.no_grad()
def attention_examples(model, heldout, cfg: ToyConfig, task: str) -> list[dict]:
    tags, numbers, target = heldout
    n = cfg.examples
    pred, A = model(tags[:n], numbers[:n], return_attention=True)
    out = []
    for i in range(n):
        out.append(
            {
                "tags": [TAGS[t] for t in tags[i].tolist()],
                "numbers": [round(v, 4) for v in numbers[i, :-1].tolist()] + [None],
                "target": [round(v, 4) for v in target[i].tolist()],
                "predicted": [round(v, 4) for v in pred[i].tolist()],
                "attention": [
                    [round(w, 4) for w in row] for row in A[i].tolist()
                ],  # [heads][slots]
            }
        )
    return out


def run_task(task: str, cfg: ToyConfig, log=print) -> dict:
    heldout = make_batch(
        task, cfg, cfg.heldout, torch.Generator().manual_seed(cfg.heldout_seed)
    )
    by_heads, params = {}, {}
    for heads in cfg.heads:
        tuning = []
        for lr in cfg.lr_grid:  # the same grid, the same seed, for every head count
            run, _ = train_one(task, heads, cfg.tuning_seed, lr, cfg, heldout)
            tuning.append({"lr": lr, "accuracy": run["accuracy"], "loss": run["loss"]})
        lr = max(tuning, key=lambda r: (r["accuracy"], -r["loss"]))["lr"]
        runs, examples = [], None
        for seed in cfg.seeds:
            run, model = train_one(task, heads, seed, lr, cfg, heldout)
            runs.append(run)
            if examples is None:
                examples = attention_examples(model, heldout, cfg, task)
        params[heads] = count_parameters(model)
        acc = [r["accuracy"] for r in runs]
        loss = [r["loss"] for r in runs]
        by_heads[str(heads)] = {
            "heads": heads,
            "head_width": cfg.d_model // heads,
            "parameters": params[heads],
            "lr": lr,
            "tuning": tuning,
            "runs": runs,
            "accuracy_mean": statistics.fmean(acc),
            "accuracy_sd": _sd(acc),
            "loss_mean": statistics.fmean(loss),
            "loss_sd": _sd(loss),
            "examples": examples,
        }
        log(
            f"toy {task}, {heads} head(s): lr {lr:g}, accuracy {statistics.fmean(acc):.3f} \u00b1 {_sd(acc):.3f}"
        )
    if len(set(params.values())) != 1:
        raise AssertionError(f"head counts differ in parameters: {params}")
    gap = head_gap(by_heads, cfg.heads)
    return {
        "task": task,
        "description": TASKS[task],
        "why": WHY[task],
        "expected": EXPECT[task],
        "outputs": outputs(task),
        "metric": f"every number within {TOLERANCE}",
        "chance": chance(task, heldout),
        "by_heads": by_heads,
        "gap": gap,
    }


# A gap's verdict from the paired interval of (several heads - one head) in share solved.
VERDICT = {
    "behind": "multi-head better",
    "ahead": "one head better",
    "not_separated": "no clear gap",
}


def head_gap(by_heads: dict, heads) -> dict | None:
    """Every head count above one against one head, paired by seed, as export/paired.py compares page 5's
    models: per-seed differences of the share solved, their mean and a 95 % t-interval. The same seed gives
    every head count the same first weights and the same batches, so the seeds pair. The gap shown is the
    head count with the best mean; it is a verdict only when its interval excludes zero."""
    one = {r["seed"]: r["accuracy"] for r in by_heads[str(min(heads))]["runs"]}
    multi = [h for h in heads if h > min(heads)]
    if not multi:
        return None
    against = {
        str(h): paired.compare(
            {r["seed"]: r["accuracy"] for r in by_heads[str(h)]["runs"]}, one
        )
        for h in multi
    }
    best = max(multi, key=lambda h: by_heads[str(h)]["accuracy_mean"])
    c = against[str(best)]
    return {
        "multi_heads": best,
        "accuracy_difference": c["mean"],
        "n": c["n"],
        "low": c["low"],
        "high": c["high"],
        "rule": RULE,
        "verdict": VERDICT[c["outcome"]],
        "against_one_head": {
            h: {**c, "verdict": VERDICT[c["outcome"]]} for h, c in against.items()
        },
    }


def _run_task_quietly(args) -> dict:
    torch.set_num_threads(1)
    task, cfg = args
    return run_task(task, cfg, log=lambda m: print(m, flush=True))


def measure(cfg: ToyConfig, log=print, workers: int = 1) -> dict:
    """Every task; ``workers`` > 1 runs the tasks in that many processes (the same numbers, sooner)."""
    torch.set_num_threads(1)
    start = time.perf_counter()
    if workers > 1 and len(cfg.tasks) > 1:
        import multiprocessing

        with multiprocessing.get_context("spawn").Pool(
            min(workers, len(cfg.tasks))
        ) as pool:
            tasks = pool.map(_run_task_quietly, [(t, cfg) for t in cfg.tasks])
    else:
        tasks = [run_task(t, cfg, log) for t in cfg.tasks]
    return {
        "schema": SCHEMA,
        "config": {
            **asdict(cfg),
            "heads": list(cfg.heads),
            "tasks": list(cfg.tasks),
            "lr_grid": list(cfg.lr_grid),
            "seeds": list(cfg.seeds),
        },
        "setting": {
            "tags": list(TAGS),
            "query_slot": "last",
            "tolerance": TOLERANCE,
            "embedding": "tag row + position row + number x one learned row",
            "keys": "from the tag and position rows only (pair_keys_see_numbers: the whole row)",
            "optimizer": "AdamW, weight decay 0",
            "tuning": "each learning rate of lr_grid on "
            "tuning_seed; the best held-out accuracy is kept, per task and head count",
        },
        "tasks": tasks,
        "seconds": time.perf_counter() - start,
        "torch_threads": torch.get_num_threads(),
    }


def build(out_dir, cfg: ToyConfig = ToyConfig(), log=print, workers: int = 1) -> Path:
    """Train and measure every task and head count; write the artefact atomically; return its path."""
    result = measure(cfg, log, workers)
    path = atomic.write_json(Artefacts(out_dir).toy_task, result)
    log(f"wrote {path} ({result['seconds']:.0f} s)")
    return path


def stage(ctx) -> None:
    steps = getattr(ctx.args, "toy_steps", None)
    build(ctx.out, ToyConfig(steps=steps) if steps else ToyConfig())


def command(args) -> None:
    """``python -m export toy_task``: the stage, with its own --steps, --seeds, --tasks and --workers."""
    from .cli_checks import check_out

    check_out(args)
    cfg = ToyConfig(
        **{
            k: v
            for k, v in (
                ("steps", args.steps),
                ("seeds", args.seeds),
                ("tasks", args.tasks),
            )
            if v is not None
        }
    )
    build(Path(args.out), cfg, workers=args.workers)
