"""Model names live in the registry (export/models.py): code elsewhere asks it, or the manifest, for them.

A name typed in the pipeline, the site's hooks and scripts or the benchmarks
would miss a model added to the registry (adding a model must stay one line in the registry).
Names inside longer identifiers (``one_head_weights``, ``microgpt_one_head``) are
other words; ``"mlp"`` compared with a ``kind`` is the model kind, not a name.
"""

from __future__ import annotations

import re
from pathlib import Path

from export.models import MODEL_NAMES

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("export", "site_src", "bench")
REGISTRY = ROOT / "export" / "models.py"
NAME = re.compile(r"(?<!\w)(" + "|".join(map(re.escape, MODEL_NAMES)) + r")(?![\w]|\.py)")
KIND = re.compile(r"\bkind\b|KINDS")


def typed_names() -> list[str]:
    hits = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in (".py", ".js") or path == REGISTRY or "vendor" in path.parts:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                for match in NAME.finditer(line):
                    if match.group(1) in ("mlp",) and KIND.search(line):
                        continue  # the MLP's kind ("mlp" or "attention"), not its name
                    hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return hits


def test_no_model_name_is_typed_outside_the_registry():
    assert typed_names() == []


def test_the_check_finds_a_typed_name():
    line = 'MODEL = "four_heads"'
    assert NAME.search(line) and not NAME.search("one_head_weights = 1") and not NAME.search("export/mlp.py")
