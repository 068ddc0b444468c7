"""Where the figures' numbers come from, and the errors that name a missing one."""
from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.figures")

ROOT = Path(__file__).resolve().parents[3]
WASM_ASSETS = Path(os.environ.get("MHA_WASM_ASSETS") or ROOT / "wasm_assets")


class FigureError(Exception):
    pass


_READ: dict[str, tuple[int, dict]] = {}  # name -> (mtime_ns, document): each file is parsed once per change


def load_json(name: str) -> dict:
    """A file of wasm_assets/ as JSON, read again only when it changed (the figures share evidence.json)."""
    path = WASM_ASSETS / name
    try:
        mtime = path.stat().st_mtime_ns
        if name not in _READ or _READ[name][0] != mtime:
            _READ[name] = (mtime, json.loads(path.read_text(encoding="utf-8")))
        return _READ[name][1]
    except FileNotFoundError:
        raise FigureError(f"{path} is missing; run the pipeline step that writes it (see README)") from None
    except json.JSONDecodeError as exc:
        raise FigureError(f"{path} is not valid JSON ({exc}); rerun the pipeline step that writes it") from None


def project_on_path() -> None:
    """Make ``import export...`` work: the figures use the pipeline's own code."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def trained_config() -> dict:
    """Sizes of the trained four-head model, from the evidence."""
    ev = load_json("evidence.json")
    p = ev["protocol"]
    return {"C": ev["vocabulary"]["C"], "T": ev["vocabulary"]["T"], "D": p["d_model"], "hidden": p["hidden"],
            "heads": p["heads"]["four_heads"]}
