"""Look inside the heads: what each one costs, and where its attention goes.

Run on the shipped seed-11 attention models (the compact checkpoints, i.e. the
very weights the browser runs) and the whole test split:

* **Knock-out.** The four-head model's test perplexity with each head switched
  off (``head_mask`` 0: its message is left out before ``W_O``), with only one
  head kept, and with none; plus how often the top next token (the greedy
  choice) changes against the full model.
* **Atlas.** For each head of the four-head and the one-head model, the
  average share of the final query's attention that goes to each kind of
  source: by relative offset (0 is the final token itself, 1 the previous
  token, ...), the story-start marker BOS (PAD sources always get 0, by the
  mask), punctuation, an earlier occurrence of the final word, and the token
  right after such an occurrence. Categories overlap. Each share comes with
  what spreading attention evenly over the visible tokens would give, and
  each head with the test window where its most distinctive kind is largest.
* **Preset.** For the held-out preset opening: the greedy continuation with
  each head knocked out, and the top five next tokens (PAD, BOS and UNK left
  out, as generation does), which the compare page's inspector reproduces live.

The stage writes ``heads.json`` (its own artefact) and the atlas figure
``head_atlas.svg``; the evidence stage, which runs after it, embeds heads.json
in evidence.json under ``heads`` (this stage never writes the evidence).
"""

from __future__ import annotations

import html
import math
from pathlib import Path

import torch
import torch.nn.functional as F

from . import atomic
from .artefacts import Artefacts
from .generate import EXCLUDED_IDS, generate_ids, prompt_history
from .checkpoints import load_compact
from .digest import file_sha256
from .palette import HEAD_LIGHT
from .models import attention_models, most_heads_model
from .windows import context_window
from .wordlm import BOS_ID, PAD_ID, UNK_ID, detokenize, tokenize

# The site's head palette (colour-blind-safe, Okabe-Ito hues darkened for 4.5:1 on white),
# the light-scheme values of site_src/css/figures.css's --mha-head-1..4: head k has
# the same colour in every figure, table and widget (tests/pipeline/test_heads_stage.py keeps the
# two equal). The atlas image and the compare page's inspector read them from the evidence.
SITE_HEAD_PALETTE = HEAD_LIGHT


def head_colours() -> dict[str, list[str]]:
    """Head k of every shipped attention model has the palette's k-th colour."""
    return {s.name: list(SITE_HEAD_PALETTE[: s.heads]) for s in attention_models()}


OFFSET_BINS = (
    ("offset_0", 0, 0),
    ("offset_1", 1, 1),
    ("offset_2", 2, 2),
    ("offset_3", 3, 3),
    ("offset_4_7", 4, 7),
    ("offset_8_plus", 8, 10**9),
)
KINDS = {
    "offset_0": "the final token itself",
    "offset_1": "the previous token",
    "offset_2": "two tokens back",
    "offset_3": "three tokens back",
    "offset_4_7": "four to seven tokens back",
    "offset_8_plus": "eight or more tokens back",
    "bos": "the story-start marker",
    "punctuation": "punctuation",
    "same_word": "an earlier occurrence of the final word",
    "after_same_word": "the token after an earlier occurrence of the final word",
}
# averaged over the windows where such a token exists
CONDITIONAL = (
    "same_word",
    "after_same_word",
)
MIN_EXAMPLE_TOKENS = 16  # a clearest window is readable: at least this many real ids
BATCH = 2048


def knockout_masks(heads: int) -> dict[str, list[float]]:
    """Full model, each head off, only each head on, none: name -> mask."""
    masks = {"all": [1.0] * heads}
    for h in range(heads):
        masks[f"without_{h + 1}"] = [0.0 if k == h else 1.0 for k in range(heads)]
    for h in range(heads):
        masks[f"only_{h + 1}"] = [1.0 if k == h else 0.0 for k in range(heads)]
    masks["none"] = [0.0] * heads
    return masks


def greedy_choice(logits: torch.Tensor) -> torch.Tensor:
    """The id greedy decoding picks (PAD, BOS and UNK are never chosen), per row."""
    scores = logits.clone()
    scores[:, list(EXCLUDED_IDS)] = -math.inf
    return scores.argmax(dim=1)


@torch.no_grad()
def knockout(model, windows) -> dict:
    """Test loss, perplexity and top-token changes for each mask of ``knockout_masks``."""
    masks = knockout_masks(model.heads)
    loss = dict.fromkeys(masks, 0.0)
    changed = dict.fromkeys(masks, 0)
    n = len(windows)
    for start in range(0, n, BATCH):
        x, y = windows.batch(torch.arange(start, min(n, start + BATCH)))
        full_choice = None
        for name, mask in masks.items():
            logits = model(x, head_mask=torch.tensor(mask))
            loss[name] += F.cross_entropy(logits.double(), y, reduction="sum").item()
            choice = greedy_choice(logits)
            if full_choice is None:
                full_choice = choice
            changed[name] += int((choice != full_choice).sum())
    out = {}
    for name, mask in masks.items():
        mean = loss[name] / n
        out[name] = {
            "mask": mask,
            "test_loss": mean,
            "test_perplexity": math.exp(mean),
            "top_token_changed": changed[name] / n,
        }
    full = out["all"]["test_perplexity"]
    for row in out.values():
        row["perplexity_change"] = row["test_perplexity"] / full - 1
    return out


def _is_punctuation(itos: list[str]) -> torch.Tensor:
    return torch.tensor(
        [i > UNK_ID and not any(c.isalnum() for c in t) for i, t in enumerate(itos)]
    )


def source_kinds(
    x: torch.Tensor, punctuation: torch.Tensor
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """For windows x [B, T]: kind -> bool [B, T] (which slots are of that kind) and, for the
    conditional kinds, kind -> bool [B] (which windows have such a slot at all)."""
    B, T = x.shape
    # slot j is T - 1 - j tokens before the final one
    offset = torch.arange(T - 1, -1, -1)
    kinds = {
        name: ((offset >= lo) & (offset <= hi)).expand(B, T)
        for name, lo, hi in OFFSET_BINS
    }
    kinds["bos"] = x.eq(BOS_ID)
    kinds["punctuation"] = punctuation[x]
    last = x[:, -1:]
    word = last.gt(UNK_ID)  # an ordinary final token (not BOS or UNK)
    earlier = offset.gt(0).expand(B, T)
    kinds["same_word"] = x.eq(last) & earlier & word
    after = torch.zeros_like(kinds["same_word"])
    after[:, 1:] = x[:, :-1].eq(last) & earlier[:, 1:] & word
    kinds["after_same_word"] = after
    present = {k: kinds[k].any(dim=1) for k in CONDITIONAL}
    return kinds, present


@torch.no_grad()
def atlas(model, windows, itos: list[str]) -> dict:
    """Average attention share per head and kind of source, the uniform baseline, and the clearest windows."""
    punctuation = _is_punctuation(itos)
    H, n = model.heads, len(windows)
    sums = {k: torch.zeros(H, dtype=torch.float64) for k in KINDS}
    uniform = {k: 0.0 for k in KINDS}
    counts = {k: 0 for k in CONDITIONAL}
    distance = torch.zeros(H, dtype=torch.float64)
    scores = {
        k: torch.zeros(n, H) for k in KINDS
    }  # per window: each head's share on each kind
    offsets = torch.arange(model.T - 1, -1, -1, dtype=torch.float64)
    for start in range(0, n, BATCH):
        index = torch.arange(start, min(n, start + BATCH))
        x, _ = windows.batch(index)
        _, A = model(x, return_attention=True)  # [B, heads, T], 0 on PAD sources
        even = x.ne(PAD_ID).double()
        even = even / even.sum(dim=1, keepdim=True)
        kinds, present = source_kinds(x, punctuation)
        for k, where in kinds.items():
            share = (A * where[:, None, :]).sum(dim=-1)  # [B, heads]
            base = (even * where).sum(dim=-1)
            if k in CONDITIONAL:
                share, base = share[present[k]], base[present[k]]
                counts[k] += int(present[k].sum())
            sums[k] += share.double().sum(dim=0)
            uniform[k] += float(base.sum())
            scores[k][index] = (A * where[:, None, :]).sum(dim=-1)
        distance += (A.double() * offsets).sum(dim=-1).sum(dim=0)
    denominators = {k: counts.get(k, n) for k in KINDS}
    heads = []
    for h in range(H):
        share = {k: float(sums[k][h]) / denominators[k] for k in KINDS}
        heads.append(
            {"head": h + 1, "share": share, "mean_distance": float(distance[h]) / n}
        )
    base = {k: uniform[k] / denominators[k] for k in KINDS}
    for head in heads:
        excess = {k: head["share"][k] - base[k] for k in KINDS}
        ranked = sorted(KINDS, key=lambda k: -excess[k])
        head["ranked_kinds"] = (
            ranked  # most over-represented first, against spreading evenly
        )
        head["signature"] = ranked[0]
    return {
        "uniform": base,
        "windows_with": {k: counts[k] for k in CONDITIONAL},
        "windows": n,
        "heads": heads,
        "_scores": scores,
    }


def clearest_windows(model, windows, itos: list[str], result: dict) -> None:
    """For each head, the test window where its share on its signature kind is largest.

    Only windows a learner can type back are eligible: no UNK, at least
    MIN_EXAMPLE_TOKENS real ids, and text whose tokens come back unchanged, so
    the compare page rebuilds exactly this window from the prompt.
    """
    scores = result.pop("_scores")
    n = len(windows)
    for head in result["heads"]:
        h, kind = head["head"] - 1, head["signature"]
        order = torch.argsort(scores[kind][:, h], descending=True, stable=True)
        for i in order.tolist():
            x, _ = windows.batch(torch.tensor([i]))
            ids = x[0].tolist()
            real = [t for t in ids if t != PAD_ID]
            if len(real) < MIN_EXAMPLE_TOKENS or UNK_ID in real:
                continue
            tokens = [itos[t] for t in real if t != BOS_ID]
            prompt = detokenize(tokens)
            if (
                tokenize(prompt) != tokens
                or context_window(prompt_history(itos, prompt), model.T) != ids
            ):
                continue
            with torch.no_grad():
                _, A = model(x, return_attention=True)
            slots = [j for j, t in enumerate(ids) if t != PAD_ID]
            weights = A[0, h, slots].tolist()
            top = sorted(range(len(slots)), key=lambda r: -weights[r])[:3]
            head["clearest"] = {
                "window_index": i,
                "of": n,
                "prompt": prompt,
                "share": float(scores[kind][i, h]),
                "tokens": ["<BOS>" if t == BOS_ID else itos[t] for t in real],
                "top_sources": [
                    {
                        "offset": len(slots) - 1 - r,
                        "token": itos[real[r]],
                        "weight": weights[r],
                    }
                    for r in top
                ],
            }
            break


@torch.no_grad()
def preset_knockout(model, itos: list[str], prompt: str, max_new_tokens: int) -> dict:
    """The preset opening: greedy continuation and top five next tokens, full and without each head."""
    history = prompt_history(itos, prompt)
    x = torch.tensor([context_window(history, model.T)])
    out = {}
    for name, mask in knockout_masks(model.heads).items():
        if not (name == "all" or name.startswith("without_")):
            continue
        mask_t = torch.tensor(mask)
        scores = model(x, head_mask=mask_t)[0].double()
        scores[
            list(EXCLUDED_IDS)
        ] = -math.inf  # as the generator and the inspector see them
        p = torch.softmax(scores, dim=0)
        top = torch.argsort(p, descending=True, stable=True)[:5].tolist()
        ids, ended = generate_ids(
            lambda w, mask_t=mask_t: model(torch.from_numpy(w), head_mask=mask_t)[
                0
            ].numpy(),
            history,
            max_new_tokens,
            T=model.T,
        )
        out[name] = {
            "mask": mask,
            "top5": [{"id": i, "token": itos[i], "p": float(p[i])} for i in top],
            "continuation": {
                "ids": ids,
                "tokens": [itos[i] for i in ids],
                "text": detokenize([itos[i] for i in ids]),
                "ended_with_eos": ended,
            },
        }
    return out


def measure(checkpoints: Path, evidence: dict, corpus, log=print) -> dict:
    """The ``heads`` section: knock-out, atlas and preset for the shipped attention models."""
    itos, test = corpus.vocab.itos, corpus.windows["test"]
    seed = evidence["preset"]["seed"]
    section = {
        "split": "test",
        "windows": len(test),
        "seed": seed,
        "kinds": KINDS,
        "colours": head_colours(),
        "checkpoints": {},
        "atlas": {},
    }
    # the model whose heads are knocked out one by one
    taken_apart = most_heads_model().name
    for name in (s.name for s in attention_models()):
        path = checkpoints / f"{name}-seed{seed}.pt"
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} not found: run `python -m export onnx` first"
            )
        model = load_compact(path)
        section["checkpoints"][name] = {"file": path.name, "sha256": file_sha256(path)}
        result = atlas(model, test, itos)
        clearest_windows(model, test, itos, result)
        section["atlas"][name] = result
        log(f"{name}: atlas of {model.heads} head(s) over {len(test):,} test windows")
        if name == taken_apart:
            section["knockout"] = knockout(model, test)
            ko = section["knockout"]
            log(
                f"{name} knock-out perplexity: "
                + ", ".join(f"{k} {v['test_perplexity']:.2f}" for k, v in ko.items())
            )
            preset = evidence["preset"]
            section["preset"] = {
                "prompt": preset["prompt"],
                "max_new_tokens": preset["max_new_tokens"],
                "model": name,
                **preset_knockout(
                    model, itos, preset["prompt"], preset["max_new_tokens"]
                ),
            }
    shipped = (
        evidence.get("onnx", {}).get(taken_apart, {}).get("test_perplexity_shipped")
    )
    if shipped is not None and not math.isclose(
        section["knockout"]["all"]["test_perplexity"], shipped, rel_tol=1e-5
    ):
        raise AssertionError(
            "the full four-head model's perplexity differs from the shipped one in evidence.json"
        )
    return section


# --------------------------------------------------------------------------- the figure

ATLAS_COLUMNS = (
    "offset_0",
    "offset_1",
    "offset_2",
    "offset_3",
    "offset_4_7",
    "offset_8_plus",
    "bos",
    "punctuation",
    "same_word",
    "after_same_word",
)
COLUMN_LABELS = {
    "offset_0": ("itself", ""),
    "offset_1": ("1 back", ""),
    "offset_2": ("2 back", ""),
    "offset_3": ("3 back", ""),
    "offset_4_7": ("4–7", "back"),
    "offset_8_plus": ("8 or more", "back"),
    "bos": ("story", "start"),
    "punctuation": ("punctu-", "ation"),
    "same_word": ("same word", "earlier"),
    "after_same_word": ("next after", "same word"),
}


NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 8: "eight", 16: "sixteen"}


def atlas_rows(section: dict) -> list[dict]:
    """The figure's rows: label, colour and shares, one-head model first, then the uniform baseline."""
    rows = []
    models = sorted(
        section["atlas"], key=lambda name: len(section["atlas"][name]["heads"])
    )
    for name in models:
        n = len(section["atlas"][name]["heads"])
        for head in section["atlas"][name]["heads"]:
            label = (
                "One head"
                if n == 1
                else f"Head {head['head']} of {NUMBER_WORDS.get(n, n)}"
            )
            rows.append(
                {
                    "label": label,
                    "colour": section["colours"][name][head["head"] - 1],
                    "share": head["share"],
                    "signature": head["signature"],
                }
            )
    rows.append(
        {
            "label": "Spread evenly",
            "colour": "#6b6b6b",
            "share": section["atlas"][models[-1]]["uniform"],
            "signature": None,
        }
    )
    return rows


def atlas_svg(section: dict) -> str:
    """Bars of each head's average attention share per kind of source (the same numbers as the page's table)."""
    rows = atlas_rows(section)
    even = rows[-1]["share"]
    left, top, col_w, row_h, bar_max = 140, 62, 68, 50, 54
    width, height = left + col_w * len(ATLAS_COLUMNS) + 10, top + row_h * len(rows) + 44
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-labelledby="atlas-title" font-family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif">',
        '<title id="atlas-title">Head atlas: average share of the final position\'s attention per kind of source, '
        "for each head of the one-head and four-head models, over the whole test split</title>",
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
    ]
    for c, kind in enumerate(ATLAS_COLUMNS):
        x = left + c * col_w + col_w / 2
        a, b = COLUMN_LABELS[kind]
        out.append(
            f'<text x="{x:.1f}" y="24" font-size="12.5" text-anchor="middle" fill="#222">{html.escape(a)}</text>'
        )
        if b:
            out.append(
                f'<text x="{x:.1f}" y="41" font-size="12.5" text-anchor="middle" fill="#222">{html.escape(b)}</text>'
            )
    out.append(
        f'<line x1="{left}" y1="{top - 8}" x2="{width - 10}" y2="{top - 8}" stroke="#999"/>'
    )
    for r, row in enumerate(rows):
        y = top + r * row_h
        if r % 2 == 0:
            out.append(
                f'<rect x="0" y="{y - 4}" width="{width}" height="{row_h}" fill="#f3f3f3"/>'
            )
        out.append(
            f'<rect x="8" y="{y + 10}" width="14" height="14" fill="{row["colour"]}" stroke="#222" stroke-width="0.6"/>'
        )
        out.append(
            f'<text x="28" y="{y + 22}" font-size="13.5" fill="#111">{html.escape(row["label"])}</text>'
        )
        for c, kind in enumerate(ATLAS_COLUMNS):
            v = row["share"][kind]
            x = left + c * col_w + (col_w - bar_max) / 2
            w = max(0.5, bar_max * v)
            outline = (
                ' stroke="#111" stroke-width="1.6"' if kind == row["signature"] else ""
            )
            out.append(
                f'<rect x="{x:.1f}" y="{y + 20}" width="{bar_max}" height="12" fill="none" stroke="#bbb" stroke-width="0.6"/>'
            )
            out.append(
                f'<rect x="{x:.1f}" y="{y + 20}" width="{w:.1f}" height="12" fill="{row["colour"]}"{outline}/>'
            )
            # where spreading evenly would put it
            if row["signature"] is not None or r < len(rows) - 1:
                tick = x + bar_max * even[kind]
                out.append(
                    f'<line x1="{tick:.1f}" y1="{y + 17}" x2="{tick:.1f}" y2="{y + 35}" stroke="#111" stroke-width="1.2"/>'
                )
            out.append(
                f'<text x="{x + bar_max / 2:.1f}" y="{y + 14}" font-size="13" text-anchor="middle" '
                f'fill="#111">{100 * v:.0f}%</text>'
            )
    out.append(
        f'<text x="8" y="{height - 24}" font-size="12" fill="#333">Bar length: average share (0–100 %) over '
        f"{section['windows']:,} test windows. Black tick: what spreading attention evenly would give.</text>"
    )
    out.append(
        f'<text x="8" y="{height - 8}" font-size="12" fill="#333">Outlined bar: the kind each head favours most '
        "above that. Kinds overlap (a comma one token back counts as both).</text>"
    )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def write_figure(out: Path, section: dict) -> Path:
    return atomic.write_text(out / section["figure"], atlas_svg(section))


def write(
    checkpoints: Path, out: Path, data=None, log=print, runs: Path | None = None
) -> dict:
    """Measure, write heads.json and head_atlas.svg (``python -m export evidence`` embeds them next)."""
    from .corpus import corpus_of_evidence
    from .evidence import measurements

    # the measured core: preset, source, split, ONNX figures
    evidence = measurements(out, runs)
    torch.set_num_threads(1)  # the figures do not depend on it; the machine is shared
    section = measure(
        checkpoints, evidence, corpus_of_evidence(evidence, data), log=log
    )
    section["figure"] = "head_atlas.svg"
    atomic.write_json(Artefacts(out).heads, section)
    write_figure(out, section)
    log(f"wrote {out / 'heads.json'}, {out / 'head_atlas.svg'}")
    return section


def stage(ctx) -> None:
    write(ctx.checkpoints, ctx.out, data=getattr(ctx.args, "data", None), runs=ctx.runs)
