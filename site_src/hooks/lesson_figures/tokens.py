"""Page 3: one text as words, characters and subwords from a byte-pair encoder trained on the stories."""

from __future__ import annotations

from .common import FigureError, load_json
from .svg import FONT, rect, svg, text


def subwords_result() -> tuple[dict, str]:
    """The byte-pair encoder's example, as the pipeline wrote it (``python -m export.lesson.subwords``)."""
    data = load_json("subwords.json")
    if not isinstance(data.get("tokens"), dict):
        raise FigureError("wasm_assets/subwords.json has no tokens; rerun `python -m export.lesson.subwords`")
    return data, "written by the pipeline"


def figure_tokenizers() -> tuple[str, str]:
    data, _ = subwords_result()
    rows = [
        ("words (ours)", data["tokens"]["words"]),
        ("subwords (BPE)", data["tokens"]["subwords"]),
        ("characters", data["tokens"]["characters"]),
    ]
    w_window = data["window"]
    W = 400
    parts = []
    y = 8
    desc_rows = []
    for label, toks in rows:
        parts.append(text(4, y + 14, f"{label}: {len(toks)} tokens", "mha-fig__label", weight="700"))
        y += 22
        x = 4
        first_window = len(toks) - w_window
        for k, t in enumerate(toks):
            shown = "␣" if t == " " else t
            tw = max(16, 8 * len(shown) + 10)
            if x + tw > W - 4:
                x = 4
                y += 28
            cls = "mha-chip mha-chip--window" if k >= first_window else "mha-chip"
            parts.append(rect(x, y, tw, 22, cls, rx=4))
            parts.append(text(x + tw / 2, y + 15.5, shown, "mha-chip__text", anchor="middle", size=FONT - 1))
            x += tw + 4
        y += 36
        window = [("space" if t == " " else t) for t in toks[-w_window:]]
        desc_rows.append(
            f"{label}, {len(toks)} tokens: {' | '.join('space' if t == ' ' else t for t in toks)}; "
            f"the last {w_window} are {' | '.join(window)}"
        )
    parts.append(rect(4, y - 6, 14, 12, "mha-chip mha-chip--window", rx=3))
    parts.append(
        text(
            24,
            y + 4,
            f"the last {w_window} tokens: what a {w_window}-token window would hold",
            "mha-fig__small",
            size=FONT - 1,
        )
    )
    height = y + 12
    desc = f"“{data['example']}” tokenized three ways. " + ". ".join(desc_rows) + "."
    body = svg("tokenizers", W, height, f"“{data['example']}” as words, subwords and characters", desc, "".join(parts))
    cap = (
        f"**One text, three tokenizers.** “{data['example']}” split by our word rules, by a byte-pair "
        f"encoder with {data['vocab_size']:,} items that Hugging Face *tokenizers* learned from our "
        f"{data['training_stories']:,} training stories (the pipeline ships it, and the playground below "
        "encodes with it), and into single characters "
        "(␣ is a space). The outlined tokens are the last "
        f"{w_window}: all that a {w_window}-token window would hold."
    )
    return body, cap
