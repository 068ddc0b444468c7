"""Where the figures' numbers come from, and the errors that name a missing one.

The figures only read files the pipeline wrote into the artefact folder
(``export/artefacts.py``, the one module of ``export/`` the site build imports:
it is standard library only). Nothing here computes with the models.
"""

from __future__ import annotations

import json
import logging

import export.artefacts as artefacts

log = logging.getLogger("mkdocs.hooks.figures")


def assets() -> artefacts.Artefacts:
    """The artefact folder of this build (``$MHA_WASM_ASSETS`` is read at each build)."""
    return artefacts.Artefacts()


class FigureError(Exception):
    pass


_READ: dict[str, tuple[int, dict]] = {}  # name -> (mtime_ns, document): each file is parsed once per change


def load_json(name: str) -> dict:
    """A file of wasm_assets/ as JSON, read again only when it changed (the figures share evidence.json)."""
    path = assets().root / name
    try:
        mtime = path.stat().st_mtime_ns
        if name not in _READ or _READ[name][0] != mtime:
            _READ[name] = (mtime, json.loads(path.read_text(encoding="utf-8")))
        return _READ[name][1]
    except FileNotFoundError:
        raise FigureError(f"{path} is missing; run the pipeline step that writes it (see README)") from None
    except json.JSONDecodeError as exc:
        raise FigureError(f"{path} is not valid JSON ({exc}); rerun the pipeline step that writes it") from None


def page_data() -> dict:
    """``page_data.json``: what ``python -m export pagedata`` computed for the pages."""
    return load_json(assets().page_data.name)


def attention_models() -> list[dict]:
    """The shipped attention models, in the manifest's order (fewest heads first)."""
    return sorted(
        (m for m in load_json("models/manifest.json")["models"] if m["kind"] == "attention"), key=lambda m: m["heads"]
    )


def trained_config() -> dict:
    """Sizes of the trained four-head model, from the evidence."""
    ev = load_json("evidence.json")
    p = ev["protocol"]
    return {
        "C": ev["vocabulary"]["C"],
        "T": ev["vocabulary"]["T"],
        "D": p["d_model"],
        "hidden": p["hidden"],
        "heads": attention_models()[-1]["heads"],
    }
