"""build_weights.json: the build exercise's weights are the shipped four-head ONNX's, fresh, and drive the graph.

The learner multiplies by these numbers in plain Python and is checked against
the teaching graph (``four_heads.steps.onnx``), which runs the shipped file: a
correct solution on these weights must give the graph's tensors within 1e-4,
the tolerance the exercise states.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from export import teaching_graph
from export.artefacts import Artefacts
from export.generate import prompt_history
from export.lesson import build_weights
from export.windows import context_window

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pyodide"))
import build_solution  # noqa: E402  (the exercise's reference solution, plain Python)

TOLERANCE = 1e-4  # the exercise's stated tolerance: float32 graph against Python floats
PROMPTS = (
    "lily",
    "once upon a time there was a little girl named lily",
    "the big dog ran to the park and saw a red ball under the tree",
)


def test_build_weights_inputs_are_unchanged_since_it_was_written():
    art = Artefacts()
    if not art.build_weights.is_file():
        pytest.fail(f"{art.build_weights} is missing: run `python -m export build_weights`")
    stale = build_weights.stale_inputs(art)
    assert not stale, (
        f"build_weights.json is stale: {', '.join(stale)} changed since it was written; "
        "run `python -m export build_weights` and commit wasm_assets/build_weights.json"
    )


def test_build_weights_rebuilt_now_equal_the_committed_file():
    art = Artefacts()
    assert build_weights.build(art) == json.loads(art.build_weights.read_text())  # the same bytes read: exact


def test_weights_are_out_by_in_with_biases():
    doc = json.loads(Artefacts().build_weights.read_text())
    d = doc["d_model"]
    assert doc["heads"] * doc["head_dim"] == d
    for layer in build_weights.LAYERS:
        assert len(doc[layer]) == d and all(len(row) == d for row in doc[layer]), layer
        assert len(doc["b" + layer[1:]]) == d, layer


@pytest.mark.parametrize("prompt", PROMPTS)
def test_a_correct_solution_on_these_weights_gives_the_teaching_graphs_tensors(prompt):
    art = Artefacts()
    doc = json.loads(art.build_weights.read_text())
    vocab = json.loads(art.vocab.read_text())
    ids = prompt_history(vocab["itos"], prompt)
    n, heads = len(ids), doc["heads"]
    out = teaching_graph.run(
        teaching_graph.session(art.teaching_onnx(build_weights.MODEL)), context_window(ids, vocab["T"])
    )
    E = out["E"][0, -n:].tolist()

    def close(got, want):
        assert np.abs(np.asarray(got) - want).max() <= TOLERANCE

    for name in ("Q", "K", "V"):
        rows = build_solution.project(E, doc[f"W_{name}"], doc[f"b_{name}"])
        close(build_solution.split_heads(rows, heads), out[name][0, :, -n:])
    close(build_solution.multi_head_attention(E, doc, heads), out["update"][0, -n:])


@pytest.mark.parametrize("prompt", PROMPTS)
def test_the_tail_graph_on_the_graphs_updated_row_gives_the_models_logits(prompt):
    """E's final row plus the final update row, through the tail graph: the shipped model's own logits."""
    import onnxruntime as ort

    art = Artefacts()
    doc = json.loads(art.build_weights.read_text())
    assert doc["tail"]["sha256"] == build_weights.file_sha256(art.root / doc["tail"]["file"])
    vocab = json.loads(art.vocab.read_text())
    out = teaching_graph.run(
        teaching_graph.session(art.teaching_onnx(build_weights.MODEL)),
        context_window(prompt_history(vocab["itos"], prompt), vocab["T"]),
    )
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    tail = ort.InferenceSession(str(build_weights.tail_path(art)), opts, providers=["CPUExecutionProvider"])
    updated = (out["E"][0, -1] + out["update"][0, -1])[None].astype(np.float32)
    (logits,) = tail.run(["logits"], {"updated": updated})
    assert np.abs(logits - out["logits"]).max() <= TOLERANCE
    assert int(logits.argmax()) == int(out["logits"].argmax())


def test_the_tail_graph_holds_no_copy_of_the_weights():
    art = Artefacts()
    assert build_weights.tail_path(art).stat().st_size < 4096  # every weight is read from four_heads.onnx
