"""Write the lesson's notebook: the worked calculations of pages 1-4, runnable.

``build_notebook()`` returns an nbformat-4 notebook (a plain dict); the site
build (``site_src/hooks/downloads.py``) writes it to
``site/downloads/mha-lesson.ipynb``, and ``python -m export.lesson.notebook OUT``
writes it anywhere. Its cells use only this package, numpy and torch:

1. the two-source toy of page 1 (one head vs two heads on invented values);
2. the two-head worksheet of page 2 (``export.lesson.worksheet``), when present;
3. "Lily found a red ball." turned into windows (``export.lesson.walkthrough.lily_example``);
4. the B = 2 batch through the shipped four-head model (``load_compact`` and
   ``forward_full``), with the loss, and one greedy step of generation;
5. page 5: the three shipped models' parameter counts and their greedy
   continuations of the preset prompt, each printed beside the figure in
   ``evidence.json`` it must equal.

The first code cell finds the lesson folder (the one holding ``export/`` and
``wasm_assets/``): the current folder or a parent, or ``$MHA_LESSON_DIR``.
The downloadable archive (``site_src/hooks/downloads.py``) is such a folder.

The site ships the notebook *with its outputs*: ``python -m export.lesson.notebook
--execute wasm_assets/mha-lesson.ipynb`` runs it (nbclient, one kernel, about
half a minute) and saves the result, which the build copies into the
downloads. ``tests/site_build/test_downloads.py`` fails when the saved notebook's
code differs from ``build_notebook()``: then run that command again.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .. import atomic


def _md(text: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": text.strip("\n")}


def _code(text: str) -> dict:
    return {
        "cell_type": "code",
        "metadata": {},
        "execution_count": None,
        "outputs": [],
        "source": text.strip("\n"),
    }


SETUP = r"""
import json, math, os, sys
from pathlib import Path

def find_lesson_dir() -> Path:
    env = os.environ.get("MHA_LESSON_DIR")
    candidates = [Path(env)] if env else []
    here = Path.cwd().resolve()
    candidates += [here, *here.parents]
    for c in candidates:
        if (c / "export" / "artefacts.py").is_file() and (c / "wasm_assets").is_dir():
            return c
    raise FileNotFoundError("Run this notebook in the unpacked lesson folder (mha-lesson/, which holds "
                            "export/ and wasm_assets/), or set MHA_LESSON_DIR to that folder.")

LESSON = find_lesson_dir()
sys.path.insert(0, str(LESSON))
from export.artefacts import Artefacts
from export.models import most_heads_model
files = Artefacts()  # the lesson's artefact folder and every file's name in it (export/artefacts.py)
import numpy as np
import torch
torch.set_num_threads(1)  # the figures below do not need more, and results stay the same everywhere
print("lesson folder found; torch", torch.__version__)
"""

TWO_SOURCE = r"""
# Two sources with invented value rows. A head's message is a weighted sum of value rows.
river, fisherman = np.array([10.0, 1.0]), np.array([2.0, 8.0])
values = np.stack([river, fisherman])

single = np.array([0.8, 0.2]) @ values            # one head: the same weights for both coordinates
setting_head = (np.array([0.8, 0.2]) @ values)[0]   # a head that favours river, read coordinate 0
person_head = (np.array([0.2, 0.8]) @ values)[1]    # a head that favours fisherman, read coordinate 1
print("one head:", single)
print("two heads:", round(float(setting_head), 3), round(float(person_head), 3))
"""

WORKSHEET = r"""
# Page 2's worksheet: ten tokens, width 4, two heads of width 2 (seeded, rounded inputs).
from export.lesson import worksheet
ws = worksheet.compute()
np.set_printoptions(precision=3, suppress=True)
print(ws["tokens"])
print("A for the final receiver, per head:\n", ws["A"][:, -1])
print("messages at the final receiver, per head:\n", ws["H"][:, -1])
print("updated final row:", ws["output"][-1])
"""

LILY = r"""
# Page 3: the authored sentence through the pipeline's tokenizer, toy vocabulary and windows.
from export.lesson.walkthrough import lily_example
vocab = json.loads(files.vocab.read_text())
lily = lily_example(vocab["itos"], vocab["T"])
print("tokens:", lily["tokens"])
print("toy vocabulary:", [v["token"] for v in lily["vocab"]])
print("ids with BOS/EOS:", lily["ids"])
print("'blue' ->", lily["blue_plain"], "with boundaries ->", lily["blue_bounded"])
for r in lily["rows"]:
    print(r["row"], r["context_tokens"], "->", r["target_token"])
print("targets for w = 2, 4, 6, 8:", lily["targets_by_width"])
print("B = 2 batch X:", lily["batch"]["X"], "y:", lily["batch"]["y"])
print("real-vocabulary ids:", lily["real"]["ids"])
"""

WALK = r"""
# Page 4: the same two prefixes through the shipped four-head model, every stage.
import torch.nn.functional as F
from export.checkpoints import load_compact
model = load_compact(files.checkpoint(most_heads_model().name))
X = torch.tensor(lily["real"]["X"])
y = torch.tensor(lily["real"]["y"])
with torch.no_grad():
    out = model.forward_full(X)
for name, t in out.items():
    print(f"{name:9s}", tuple(t.shape))
T = model.T
print("head weights of the final receiver over the last four slots (row 1):")
print(out["A"][1, :, -1, T - 4:].numpy().round(3))
loss = F.cross_entropy(out["logits"], y)
print("loss:", float(loss), " perplexity of this tiny batch:", math.exp(float(loss)))
"""

GENERATE = r"""
# Page 4: one greedy step from the held-out preset prompt, then a few more.
from export.generate import EXCLUDED_IDS, generate_ids, prompt_history
from export.windows import context_window
evidence = json.loads(files.evidence.read_text())
itos = vocab["itos"]
history = prompt_history(itos, evidence["preset"]["prompt"])
window = context_window(history, T)
print("history length:", len(history), " PAD slots:", window.count(0))
with torch.no_grad():
    logits = model(torch.tensor([window]))[0]
logits[list(EXCLUDED_IDS)] = float("-inf")
print("greedy next token:", itos[int(logits.argmax())])
new, ended = generate_ids(model, history, 8)
print("eight greedy steps:", [itos[i] for i in new], "ended with EOS:", ended)
"""

RESULTS = r"""
# Page 5: the three shipped models, checked against the evidence file the site's figures come from.
from export.generate import generate_text
from export.models import count_parameters
for name in evidence["protocol"]["models"]:
    m = load_compact(files.checkpoint(name))
    saved = evidence["preset"]["continuations"][name]["text"]
    mine = generate_text(m, itos, evidence["preset"]["prompt"], evidence["preset"]["max_new_tokens"])["text"]
    print(f"{name} parameters: {count_parameters(m)} (evidence: {evidence['aggregates'][name]['parameters']})")
    print(f"{name} continuation: {mine}")
    print(f"{name} continuation equals the saved one: {mine == saved}")
"""


def build_notebook() -> dict:
    cells = [
        _md("""
# Multi-head attention: the worked calculations

This notebook repeats the lesson's worked examples with the lesson's own Python
package (`export/`) and the shipped seed-11 checkpoints. It runs in the unpacked
lesson archive (`mha-lesson/`, which holds `export/` and `wasm_assets/`; see its
README for the one command). Every figure it prints is computed here, not
copied from the pages; the last cell compares its results with `evidence.json`.
"""),
        _code(SETUP),
        _md("## Page 1: why separate weights help (invented two-source values)"),
        _code(TWO_SOURCE),
    ]
    cells += [
        _md("## Page 2: the two-head worksheet"),
        _code(WORKSHEET),
        _md("## Page 3: a sentence becomes training examples"),
        _code(LILY),
        _md("## Page 4: the B = 2 batch through the trained four-head model"),
        _code(WALK),
        _md("## Page 4: generation"),
        _code(GENERATE),
        _md("## Page 5: the three models, as saved"),
        _code(RESULTS),
    ]
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": {
                "name": "python3",
                "display_name": "Python 3",
                "language": "python",
            },
            "language_info": {"name": "python"},
        },
        "cells": [{**c, "id": f"cell-{i:02d}"} for i, c in enumerate(cells)],
    }


def code_cells(nb: dict) -> list[str]:
    return [c["source"] for c in nb["cells"] if c["cell_type"] == "code"]


def write_notebook(nb: dict, path: str | Path) -> Path:
    return atomic.write_text(path, json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


def execute(nb: dict, cwd: str | Path, timeout: int = 600) -> dict:
    """Run every cell in a fresh kernel started in ``cwd``; outputs are stored in the cells."""
    import nbclient
    import nbformat

    node = nbformat.from_dict(nb)
    client = nbclient.NotebookClient(
        node,
        timeout=timeout,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(cwd)}},
    )
    client.execute()
    return json.loads(nbformat.writes(node))


def outputs_text(nb: dict) -> str:
    """Everything the code cells printed, in order."""
    parts = []
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                parts.append(
                    "".join(out["text"])
                    if isinstance(out["text"], list)
                    else out["text"]
                )
    return "".join(parts)


# What the notebook needs at run time (export/ imports numpy, torch, onnx and tqdm)
# and what runs it (nbclient with an IPython kernel).
REQUIREMENTS = ("numpy", "torch", "onnx", "tqdm", "nbformat", "nbclient", "ipykernel")


def requirements() -> str:
    """Exact versions installed here, where the notebook runs (the downloads' requirements.txt)."""
    from importlib import metadata

    lines = []
    for name in REQUIREMENTS:
        version = metadata.version(name).split("+")[
            0
        ]  # torch 2.13.0+cpu -> torch==2.13.0
        lines.append(f"{name}=={version}")
    return (
        "# Exact versions the notebook was run with when the site was built.\n"
        + "\n".join(lines)
        + "\n"
    )


def main(argv: list[str] | None = None) -> int:
    import argparse

    from ..artefacts import Artefacts

    parser = argparse.ArgumentParser(
        prog="python -m export.lesson.notebook",
        description="Write the lesson notebook, optionally run and saved with outputs.",
    )
    parser.add_argument("out", nargs="?", default=Artefacts().notebook, type=Path)
    parser.add_argument(
        "--execute",
        action="store_true",
        help="run it (from the lesson folder, here) and save it with its outputs",
    )
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    nb = build_notebook()
    if args.execute:
        root = Path(__file__).resolve().parents[2]
        try:
            nb = execute(nb, cwd=root)
        except Exception as exc:  # a failing cell: say which, write nothing
            print(
                f"error: the notebook did not run: {type(exc).__name__}: {str(exc)[-800:]}",
                file=sys.stderr,
            )
            return 1
    write_notebook(nb, args.out)
    print(f"wrote {args.out}{' (with outputs)' if args.execute else ''}")
    if args.execute:  # the versions it just ran with, for the download beside it
        print(
            f"wrote {atomic.write_text(Artefacts(args.out.parent).notebook_requirements, requirements())}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
