"""Page 4's teaching graphs (export/teaching_graph.py): forward_full's every tensor, from the shipped weights.

onnxruntime on ``models/<name>.steps.onnx`` (its weights read as external data
from the shipped ``models/<name>.onnx``) against PyTorch's ``forward_full`` on
the compact checkpoint (the int8/float16 weights widened to float32), for a
short prompt, one with an unknown word and one longer than the window; the
final logits also equal the shipped final-query graph's. Floats within
tests/tolerance.py, masks, shapes and ids exactly.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import onnx
import pytest
import torch

from export.artefacts import Artefacts
from export.checkpoints import load_compact
from export.onnx_export import ort_logits, session as bytes_session
from export.teaching_graph import (
    ATTENTION_MODELS,
    DEFAULT_PARITY_PROMPTS,
    OUTPUTS,
    build,
    check_fresh,
    forward_full_outputs,
    parity_windows,
    run,
    session,
)
from export.wordlm import PAD_ID, UNK_ID
from tests.tolerance import assert_close_array

ART = Artefacts()
MAX_OWN_BYTES = 500_000  # the stepper's budget: one copy of the weights on the site


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    torch.set_num_threads(1)


@pytest.fixture(scope="module")
def vocab():
    if not ART.vocab.is_file():
        pytest.skip("vocab.json not built yet; run `make models`")
    return json.loads(ART.vocab.read_text())


@pytest.fixture(scope="module")
def windows(vocab):
    return parity_windows(vocab["itos"], vocab["T"], DEFAULT_PARITY_PROMPTS)


def test_the_three_prompts_cover_short_unknown_and_cropped(vocab, windows):
    from export.generate import prompt_history

    T = vocab["T"]
    short, unknown, long = windows
    assert 1 < sum(i != PAD_ID for i in short) < 8
    assert UNK_ID in unknown
    assert len(prompt_history(vocab["itos"], DEFAULT_PARITY_PROMPTS[2])) > T and PAD_ID not in long


@pytest.mark.parametrize("name", ATTENTION_MODELS)
def test_every_tensor_equals_pytorch_forward_full(name, windows):
    sess = session(ART.teaching_onnx(name))
    assert [o.name for o in sess.get_outputs()] == list(OUTPUTS)
    model = load_compact(ART.checkpoint(name)).eval()
    shipped = bytes_session(ART.model_onnx(name).read_bytes())
    for window in windows:
        ours, ref = run(sess, window), forward_full_outputs(model, window)
        T, H = model.T, model.heads
        assert ours["A"].shape == (1, H, T, T) and ours["Q"].shape == (1, H, T, model.head_dim)
        for k in OUTPUTS:
            if k == "mask":
                assert ours[k].dtype == np.bool_ and np.array_equal(ours[k], ref[k])
            else:
                assert_close_array(ours[k], ref[k], name=f"{name} {k}")
        # the stepper's last step shows the same logits the compare page's model computes
        assert_close_array(
            ours["logits"], ort_logits(shipped, np.asarray([window], dtype=np.int64)), name=f"{name} shipped logits"
        )


@pytest.mark.parametrize("name", ATTENTION_MODELS)
def test_weights_are_read_from_the_shipped_file(name):
    data = ART.teaching_onnx(name).read_bytes()
    shipped = ART.model_onnx(name).read_bytes()
    proto = onnx.load_from_string(data)
    external = [i for i in proto.graph.initializer if i.data_location == onnx.TensorProto.EXTERNAL]
    assert external, "the teaching graph stores its own copy of the weights"
    for init in external:
        info = {e.key: e.value for e in init.external_data}
        assert info["location"] == ART.model_onnx(name).name
        assert int(info["offset"]) + int(info["length"]) <= len(shipped)
    assert len(data) <= MAX_OWN_BYTES
    check_fresh(ART, name)  # it names the shipped file it points into, by SHA-256
    assert {p.key: p.value for p in proto.metadata_props}["weights_sha256"] == hashlib.sha256(shipped).hexdigest()


@pytest.mark.parametrize("name", ATTENTION_MODELS)
def test_rebuilding_gives_the_same_file_and_the_manifest_lists_it(name):
    data, _ = build(ART, name)
    assert data == ART.teaching_onnx(name).read_bytes(), "the teaching graph is stale: run `python -m export steps`"
    manifest = json.loads(ART.manifest.read_text())
    entry = next(m for m in manifest["models"] if m["name"] == name)
    steps = entry["steps"]
    assert steps["file"] == f"models/{ART.teaching_onnx(name).name}" and steps["weights"] == entry["file"]
    assert steps["bytes"] == len(data) and steps["sha256"] == hashlib.sha256(data).hexdigest()
    assert steps["external_path"] == ART.model_onnx(name).name and steps["outputs"] == list(OUTPUTS)


def test_a_stale_teaching_graph_is_refused(tmp_path):
    import shutil

    from export.teaching_graph import StaleTeachingGraph

    (tmp_path / "models").mkdir()
    shutil.copy(ART.teaching_onnx("one_head"), tmp_path / "models" / ART.teaching_onnx("one_head").name)
    (tmp_path / "models" / "one_head.onnx").write_bytes(ART.model_onnx("one_head").read_bytes() + b"\0")
    with pytest.raises(StaleTeachingGraph, match="python -m export steps"):
        check_fresh(Artefacts(tmp_path), "one_head")
