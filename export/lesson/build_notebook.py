"""The "Build it yourself" exercise as a notebook: the same starter and checks, in plain Python.

``build_notebook()`` returns an nbformat-4 notebook (a plain dict) made from
the exercise's one file (``site_src/pyodide/exercises/build_attention.py``:
its starter, its functions in order, its tolerance and its comparison
helpers) and the pipeline's artefacts: the weights of ``build_weights.json``
and, for one prompt, the teaching graph's tensors (``<model>.steps.onnx`` run
by onnxruntime, as the page runs it in the browser). It ships starters only:
the learner fills the functions in, and each Check cell compares their
numbers with the graph's within the exercise's tolerance. The notebook needs
nothing but Python (no NumPy, no lesson folder): the numbers travel inside it.

    python -m export.lesson.build_notebook [OUT]   # default: wasm_assets/build-it-yourself.ipynb

The site copies the file into its downloads (``site_src/hooks/downloads.py``).
``tests/pipeline/test_build_notebook.py`` fails when the saved notebook differs
from ``build_notebook()`` (then run the command again), checks that it is
valid nbformat, that its starter runs and fails every Check, and that a
correct solution passes them all.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import sys
from pathlib import Path

from .. import atomic
from ..artefacts import Artefacts
from ..digest import file_sha256
from .build_weights import MODEL, _float32_list

ROOT = Path(__file__).resolve().parents[2]
EXERCISE = ROOT / "site_src" / "pyodide" / "exercises" / "build_attention.py"
PROMPT = "once upon a time there was a little girl named lily . she liked to"  # the longest allowed: 16 rows
LAYERS = ("W_Q", "b_Q", "W_K", "b_K", "W_V", "b_V", "W_O", "b_O")
# The exercise file's comparison helpers, copied into the notebook from the file itself.
HELPERS = ("close", "first_difference")


def exercise_module():
    spec = importlib.util.spec_from_file_location("build_attention", EXERCISE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def graph_numbers(art: Artefacts, prompt: str = PROMPT) -> dict:
    """The teaching graph on ``prompt``: the last n rows (BOS included) of each tensor the Checks use.

    ``Q_rows``, ``K_rows``, ``V_rows``, ``E`` and ``update`` are n rows of d numbers; ``Q``, ``K``, ``V``
    and ``messages`` one list of n rows per head; ``scores`` and ``A`` one n x n block per head.
    """
    from .. import teaching_graph
    from ..generate import prompt_history
    from ..windows import context_window

    vocab = json.loads(art.vocab.read_text())
    ids = prompt_history(vocab["itos"], prompt)
    out = teaching_graph.run(
        teaching_graph.session(art.teaching_onnx(MODEL)),
        context_window(ids, vocab["T"]),
    )
    n = len(ids)
    heads = out["Q"].shape[1]

    def rows(name):  # [1, heads, T, dh] -> the last n rows, heads joined: n x d
        return _float32_list(out[name][0, :, -n:].transpose(1, 0, 2).reshape(n, -1))

    def per_head(name, square=False):
        t = out[name][0, :, -n:]
        return [_float32_list(t[h][:, -n:] if square else t[h]) for h in range(heads)]

    return {
        "tokens": ["BOS"] + [vocab["itos"][i] for i in ids[1:]],
        "n_heads": int(heads),
        "E": _float32_list(out["E"][0, -n:]),
        "Q_rows": rows("Q"),
        "K_rows": rows("K"),
        "V_rows": rows("V"),
        "Q": per_head("Q"),
        "K": per_head("K"),
        "V": per_head("V"),
        "scores": per_head("scores", True),
        "A": per_head("A", True),
        "messages": per_head("messages"),
        "update": _float32_list(out["update"][0, -n:]),
    }


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


def _numbered(cells: list[dict]) -> list[dict]:
    """nbformat 4.5's cell ids: fixed ones, so the same inputs always give the same file."""
    return [{"id": f"cell-{i:02d}", **cell} for i, cell in enumerate(cells)]


INTRO = """
# Build it yourself: causal multi-head attention for the trained four-head model

The notebook counterpart of the lesson page *Build it yourself* (`lesson/build/`). You write
causal multi-head attention in plain Python, lists of floats and no NumPy, one function at a
time, and each Check compares your numbers with the trained four-head model's own numbers on the
prompt **{prompt}** ({n} rows, BOS included).

What your code gets:

- **E**: one row of {d} numbers per token of the prompt, BOS first (the token's row plus its
  position's row), as the model's teaching graph computed it.
- **W_Q, W_K, W_V, W_O** and their biases **b_Q, b_K, b_V, b_O**, as the shipped model file
  stores them. Each matrix is stored **[out, in]**, as PyTorch's `nn.Linear` keeps it: output *o*
  is the sum of `W[o][i] * x[i]` over *i*, plus `b[o]`.
- {heads} heads of {dh} coordinates each: head *h* reads coordinates {dh}*h* to {dh}*h* + {last}
  of every row.

A number counts as the model's when it is within {tolerance} of it (relative above 1): a float32
model against Python floats differs in the last digits only. The page in the browser also says
in words what differs, lets you choose the prompt, and then lets your function drive the model.

Where the numbers come from: the weights are `wasm_assets/build_weights.json` (read from the
shipped `{model_file}` by `python -m export build_weights`); the expected numbers are the
teaching graph `{steps_file}` run on the prompt by onnxruntime when this notebook was written
(`python -m export.lesson.build_notebook`). Run the cells in order; the first one only loads them.
"""

LOAD = '''
import copy, json, math

NUMBERS = json.loads(r"""{numbers}""")
TOLERANCE = {tolerance}
weights = NUMBERS["weights"]   # "W_Q", "b_Q", ... "W_O", "b_O"
graph = NUMBERS["graph"]       # the teaching graph's tensors on the prompt: what each Check compares with
E, n_heads = graph["E"], graph["n_heads"]
print(f"{{len(E)}} rows of {{len(E[0])}} numbers:", " ".join(graph["tokens"]))
'''

CHECKER = '''
# What each Check calls, and what each call must give: the teaching graph's numbers.
W, H = weights, n_heads
CHECKS = {{
    "project": ([(E, W["W_Q"], W["b_Q"]), (E, W["W_K"], W["b_K"]), (E, W["W_V"], W["b_V"])],
                [graph["Q_rows"], graph["K_rows"], graph["V_rows"]]),
    "split_heads": ([(graph["Q_rows"], H)], [graph["Q"]]),
    "scores": ([(graph["Q"][h], graph["K"][h]) for h in range(H)], graph["scores"]),
    "causal_softmax": ([(graph["scores"][h],) for h in range(H)], graph["A"]),
    "blend": ([(graph["A"][h], graph["V"][h]) for h in range(H)], graph["messages"]),
    "multi_head_attention": ([(E, W, H)], [graph["update"]]),
}}
# What each level of a Check's results is (the calls first), to name the place of the first difference.
# A list names each entry of its level; every other level counts from 0, as the page's rows do.
LEVELS = {levels}

{helpers}

def _plain(value):
    """Numbers as floats, lists as lists: anything else is left as it is (and then differs)."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def check(name):
    """Call your function on the model's inputs; say whether every number is the model's, or where the first one is not."""
    calls, expected = CHECKS[name]
    fn = globals().get(name)
    if not callable(fn):
        print(f"✗ {{name}}: there is no function named {{name}} yet (run its cell first).")
        return False
    got = []
    for i, args in enumerate(calls):
        try:
            got.append(_plain(fn(*copy.deepcopy(args))))
        except Exception as exc:
            print(f"✗ {{name}}, call {{i + 1}} of {{len(calls)}}: stopped with {{type(exc).__name__}}: {{exc}}")
            return False
    at = first_difference(got, expected)
    if at is None:
        print(f"✓ {{name}} gives the model's numbers on all {{len(E)}} rows (within {{TOLERANCE}}).")
        return True
    mine, theirs = got, expected
    for i in at:
        mine = mine[i] if isinstance(mine, list) and i < len(mine) else None
        theirs = theirs[i]
    place = ", ".join(f"{{label[i]}}" if isinstance(label, list) else f"{{label}} {{i}}"
                      for label, i in zip(LEVELS[name], at))
    if isinstance(theirs, list):
        yours = f"a list of {{len(mine)}}" if isinstance(mine, list) else repr(mine)
        print(f"✗ {{name}}: not yet. At {{place}} yours is {{yours}}, the model's a list of {{len(theirs)}}.")
    else:
        print(f"✗ {{name}}: not yet. At {{place}} yours is {{mine!r}}, the model's {{theirs!r}}.")
    return False
'''

# What each level of a Check's results is (the calls first), to name the place of the first difference.
# A list names each entry of its level; every other level counts from 0, as the page's rows do.
LEVELS = {
    "project": [["Q", "K", "V"], "row", "coordinate"],
    "split_heads": ["call", "head", "row", "coordinate"],
    "scores": ["head", "receiver", "source"],
    "causal_softmax": ["head", "receiver", "source"],
    "blend": ["head", "receiver", "coordinate"],
    "multi_head_attention": ["call", "row", "coordinate"],
}


def build_notebook(art: Artefacts | None = None, prompt: str = PROMPT) -> dict:
    art = art or Artefacts()
    exercise = exercise_module()
    doc = json.loads(art.build_weights.read_text())
    weights = {k: doc[k] for k in LAYERS}
    numbers = graph_numbers(art, prompt)
    names = [name for name, _ in exercise.FUNCTIONS]
    data = {"weights": weights, "graph": numbers}
    d, heads = len(numbers["E"][0]), numbers["n_heads"]
    steps_file = art.teaching_onnx(MODEL)
    model_file = art.model_onnx(MODEL)
    cells = [
        _md(
            INTRO.format(
                prompt=prompt,
                n=len(numbers["tokens"]),
                d=d,
                heads=heads,
                dh=d // heads,
                last=d // heads - 1,
                tolerance=f"{exercise.TOLERANCE:g}",
                model_file=f"models/{model_file.name}",
                steps_file=f"models/{steps_file.name}",
            )
        ),
        _code(
            LOAD.format(
                numbers=json.dumps(data, separators=(",", ":")),
                tolerance=exercise.TOLERANCE,
            )
        ),
        _code(
            CHECKER.format(
                levels=json.dumps({name: LEVELS[name] for name in names}),
                helpers="\n\n".join(
                    inspect.getsource(getattr(exercise, h)).strip() for h in HELPERS
                ),
            )
        ),
        _md(
            "## Your code\n\nFill in the functions below, run the cell, then run the Checks after it, in order: "
            "each function uses the ones before it."
        ),
        _code(exercise.STARTER),
    ]
    for i, (name, compares) in enumerate(exercise.FUNCTIONS, 1):
        cells.append(_md(f"### Check {i}: `{name}`\n\nCompared with {compares}."))
        cells.append(_code(f'check("{name}")'))
    cells.append(
        _md(
            "When all six pass, your `multi_head_attention` computes what the trained model computes. "
            "On the page (`lesson/build/`), it then drives the model: its next words and a continuation "
            "of your prompt, each word computed with your function."
        )
    )
    inputs = {
        EXERCISE.relative_to(ROOT).as_posix(): file_sha256(EXERCISE),
        **{
            p.relative_to(art.root).as_posix(): file_sha256(p)
            for p in (art.build_weights, steps_file, model_file, art.vocab)
        },
    }
    return {
        "cells": _numbered(cells),
        "metadata": {
            "kernelspec": {
                "display_name": "Python 3",
                "language": "python",
                "name": "python3",
            },
            "language_info": {"name": "python"},
            "mha": {
                "written_by": "python -m export.lesson.build_notebook",
                "prompt": prompt,
                "inputs": inputs,
            },
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def code_cells(nb: dict) -> list[str]:
    return [c["source"] for c in nb["cells"] if c["cell_type"] == "code"]


def write(path: str | Path | None = None, art: Artefacts | None = None) -> Path:
    art = art or Artefacts()
    nb = build_notebook(art)
    return atomic.write_text(
        Path(path) if path else art.build_notebook,
        json.dumps(nb, indent=1, ensure_ascii=False) + "\n",
    )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        out = write(argv[0] if argv else None)
    except FileNotFoundError as exc:
        print(
            f"error: {exc}; run `python -m export build_weights` (and the stages before it) first",
            file=sys.stderr,
        )
        return 1
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
