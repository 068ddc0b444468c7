"""The protocol's tables (every run, mean and spread, the splits) and the quoted stories."""

from __future__ import annotations

import html

from markupsafe import Markup

from .engine import _label, _mean_sd, _table, ev, val


def runs_table() -> Markup:
    """One row per training run: model, seed, chosen update, validation and test loss, perplexity."""
    rows = []
    for i, r in enumerate(val("runs")):
        p = f"runs.{i}"
        rows.append(
            [
                _label(r["model"]),
                ev(f"{p}.seed"),
                ev(f"{p}.best_update", ","),
                ev(f"{p}.val_loss", ".3f"),
                ev(f"{p}.test_loss", ".3f"),
                ev(f"{p}.test_perplexity", ".2f"),
                ev(f"{p}.train_seconds", ",.0f"),
            ]
        )
    return _table(
        ["model", "seed", "chosen update", "validation loss", "test loss", "test perplexity", "training time (s)"],
        rows,
        ["---", "---:", "---:", "---:", "---:", "---:", "---:"],
        label="Every training run",
    )


def aggregates_table() -> Markup:
    rows = []
    for model in val("aggregates"):
        p = f"aggregates.{model}"
        rows.append(
            [
                _label(model),
                _mean_sd(p, "perplexity_mean", "perplexity_sd", ".2f"),
                _mean_sd(p, "test_loss_mean", "test_loss_sd", ".3f"),
                ev(f"{p}.runs"),
                ev(f"{p}.parameters", ","),
            ]
        )
    # Perplexity, the page's question, comes right after the model: a phone shows those two
    # columns before the table has to scroll.
    # No training times here: the runs shared a busy machine, so their times are no speed comparison
    # (the table of runs and the size-and-time door give them with that warning).
    return _table(
        ["model", "test perplexity (mean ± sd)", "test loss (mean ± sd)", "runs", "parameters"],
        rows,
        ["---", "---:", "---:", "---:", "---:"],
        label="Mean and spread per model",
    )


def audit_table() -> Markup:
    rows = []
    for split in val("audit"):
        p = f"audit.{split}"
        rows.append(
            [
                split,
                ev(f"{p}.stories", ","),
                ev(f"{p}.tokens", ","),
                ev(f"{p}.windows", ","),
                ev(f"{p}.oov_tokens", ","),
                ev(f"{p}.oov_rate", ".2%"),
            ]
        )
    return _table(
        ["split", "stories", "ordinary tokens", "windows (examples)", "tokens mapped to UNK", "UNK share"],
        rows,
        ["---", "---:", "---:", "---:", "---:", "---:"],
        label="The three splits",
    )


def story_is_cut(path: str) -> bool:
    """True when a story's text does not end a sentence (the source file cut it short)."""
    end = val(path)["text"].rstrip().rstrip("\"\u201d')")
    return not end.endswith((".", "!", "?"))


def story(path: str, head_words: int = 60, tail_words: int = 25) -> Markup:
    """A source story as a quotation with its row; longer ones keep the start and end around [...]."""
    rec = val(path)
    words = rec["text"].split()
    if len(words) > head_words + tail_words + 10:
        tail = " ".join(words[len(words) - tail_words :])
        text = html.escape(" ".join(words[:head_words])) + " […]" + (" " + html.escape(tail) if tail else "")
    else:
        text = html.escape(" ".join(words))
    cut = (
        (
            '…</p><p class="mha-story__cut"><em>The story ends here, mid-sentence: the data file '
            "itself cuts it short, and the pipeline uses it as it is.</em>"
        )
        if story_is_cut(path)
        else ""
    )
    return Markup(
        f'<blockquote class="mha-story"><p>{text}{cut}</p>'
        f'<p class="mha-story__source">Source row {ev(path + ".row")} · '
        f"{ev(path + '.token_count', ',')} tokens, {ev(path + '.word_count', ',')} words · "
        f"TinyStories (Eldan and Li), CDLA-Sharing-1.0</p></blockquote>"
    )
