"""Page 3: one text as words, characters and subwords from a byte-pair encoder trained on the stories."""
from __future__ import annotations

import os
from pathlib import Path

from .common import FigureError, load_json, log, project_on_path
from .svg import FONT, rect, svg, text


TRAIN_LIMIT_BYTES = 100_000_000  # a bigger stories file (the full 1.9 GB one) is left to the pipeline step


def subwords_result() -> tuple[dict, str]:
    """Train the byte-pair encoder now when the stories are there; otherwise use the pipeline's cache."""
    project_on_path()
    from export.data import DATA_ENV, DEFAULT_DATA, DataError
    from export.lesson import subwords

    stories = Path(os.environ.get(DATA_ENV) or DEFAULT_DATA)
    if not stories.is_file():
        log.info("figures: no stories at %s; page 3 uses wasm_assets/subwords.json", stories)
    elif stories.stat().st_size > TRAIN_LIMIT_BYTES:
        log.info("figures: %s is too big to read at every build; page 3 uses wasm_assets/subwords.json", stories)
    else:
        try:
            return subwords.build(stories), "trained during this build"
        except (DataError, OSError) as exc:
            log.info("figures: the stories could not be read (%s); page 3 uses wasm_assets/subwords.json", exc)
    data = load_json("subwords.json")
    if data.get("schema") != subwords.SCHEMA:
        raise FigureError(f"wasm_assets/subwords.json has schema {data.get('schema')!r}, expected "
                          f"{subwords.SCHEMA!r}; rerun `python -m export.lesson.subwords`")
    return data, "read from wasm_assets/subwords.json (the stories were not on disk)"


def figure_tokenizers() -> tuple[str, str]:
    data, origin = subwords_result()
    rows = [("words (ours)", data["tokens"]["words"]), ("subwords (BPE)", data["tokens"]["subwords"]),
            ("characters", data["tokens"]["characters"])]
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
        desc_rows.append(f"{label}, {len(toks)} tokens: {' | '.join('space' if t == ' ' else t for t in toks)}; "
                         f"the last {w_window} are {' | '.join(window)}")
    parts.append(rect(4, y - 6, 14, 12, "mha-chip mha-chip--window", rx=3))
    parts.append(text(24, y + 4, f"the last {w_window} tokens: what a {w_window}-token window would hold",
                      "mha-fig__small", size=FONT - 2))
    height = y + 12
    desc = f"“{data['example']}” tokenized three ways. " + ". ".join(desc_rows) + "."
    body = svg("tokenizers", W, height, f"“{data['example']}” as words, subwords and characters", desc,
               "".join(parts))
    cap = (f"**One text, three tokenizers.** “{data['example']}” split by our word rules, by a byte-pair "
           f"encoder with {data['vocab_size']:,} items that Hugging Face *tokenizers* learned from our "
           f"{data['training_stories']:,} training stories ({origin}), and into single characters "
           "(␣ is a space). The outlined tokens are the last "
           f"{w_window}: all that a {w_window}-token window would hold.")
    return body, cap

