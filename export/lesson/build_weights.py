"""The "Build it yourself" exercise's weights: the four-head model's attention layers, read from the shipped ONNX.

The learner writes multi-head attention in plain Python and checks it against
the teaching graph, which runs the shipped ``<model>.onnx``. So the weights
the learner multiplies by are read from that very file, not from a checkpoint:
its W_Q, W_K and W_V are stored for MatMul (``[in, out]``) and are written
here transposed, its W_O is stored for Gemm with ``transB=1`` (already
``[out, in]``). Every matrix is written as PyTorch's ``nn.Linear`` keeps it,
``[out, in]``, with its bias: ``y[o] = sum_i W[o][i] * x[i] + b[o]``.

The learner's E rows (token row + position row) come from the teaching graph's
own output ``E`` on their prompt, so nothing else is needed here.

``inputs`` records the sha256 of the ONNX file read, so a stale file is found
(``stale_inputs``, tested like page_data.json).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .. import atomic
from ..artefacts import Artefacts
from ..digest import file_sha256
from ..models import most_heads_model

# The shipped model whose heads the lesson takes apart (four heads today), asked of the registry.
MODEL = most_heads_model().name
SCHEMA = "mha-build-weights/1"
LAYERS = ("W_Q", "W_K", "W_V", "W_O")
ORIENTATION = (
    "[out, in], as nn.Linear stores it: y[o] = sum over i of W[o][i] * x[i], plus b[o]"
)


def _float32_list(array: np.ndarray) -> list:
    """Each float32 as the shortest decimal that reads back to the same float32 (half the bytes of float64's)."""
    if array.ndim == 1:
        return [
            float(np.format_float_positional(np.float32(x), unique=True, trim="-"))
            for x in array
        ]
    return [_float32_list(row) for row in array]


def attention_weights(onnx_path: Path) -> dict[str, np.ndarray]:
    """W_Q, W_K, W_V, W_O as [out, in] float32 arrays and b_Q ... b_O, followed through the graph's nodes."""
    import onnx
    from onnx import numpy_helper

    proto = onnx.load(str(onnx_path))
    init = {t.name: numpy_helper.to_array(t) for t in proto.graph.initializer}
    found: dict[str, np.ndarray] = {}
    for node in proto.graph.node:
        for layer in LAYERS:
            if f"/{layer}/" not in node.name:
                continue
            if node.op_type == "MatMul":  # x @ W with W [in, out]
                found[layer] = init[node.input[1]].T
            elif node.op_type == "Add":  # the bias, added after the MatMul
                found["b" + layer[1:]] = init[next(i for i in node.input if i in init)]
            elif node.op_type == "Gemm":
                attrs = {
                    a.name: onnx.helper.get_attribute_value(a) for a in node.attribute
                }
                w = init[node.input[1]]
                found[layer] = w if attrs.get("transB", 0) else w.T
                found["b" + layer[1:]] = init[node.input[2]]
    missing = [
        k for k in (*LAYERS, *("b" + layer[1:] for layer in LAYERS)) if k not in found
    ]
    if missing:
        raise ValueError(
            f"{onnx_path.name}: no {', '.join(missing)} found in its graph; "
            "was it exported by `python -m export onnx`?"
        )
    return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in found.items()}


# The shipped graph's nodes after attention: hidden layer (int8 weights), ReLU, vocabulary head (float16 weights).
TAIL_INPUT = "/model/Add_1_output_0"  # E + W_O(joined) of the final slot, [1, d_model]
TAIL_NODES = (
    "/model/hidden_layer/",
    "/model/Relu",
    "/model/vocab_head/",
    "hidden_layer.weight",
    "vocab_head.weight",
)


def tail_path(art: Artefacts) -> Path:
    return art.models_dir / f"{MODEL}.tail.onnx"


def tail_graph(onnx_path: Path) -> bytes:
    """The rest of the model after attention, as its own small graph: ``updated`` [1, d] -> ``logits`` [1, C].

    The page feeds it E's final row plus the learner's final update row, so the
    learner's attention drives the trained model. Its nodes are the shipped
    graph's own; its weights are read, as ONNX external data, from the shipped
    file's bytes (as the teaching graph's are), so it holds almost none itself.
    """
    import onnx
    from onnx import helper

    from ..teaching_graph import WEIGHTS_KEY, share_weights

    shipped = Path(onnx_path).read_bytes()
    proto = onnx.load_from_string(shipped)
    nodes = [
        n
        for n in proto.graph.node
        if any(key in n.name or key in "".join(n.output) for key in TAIL_NODES)
    ]
    used = {i for n in nodes for i in n.input}
    inits = [t for t in proto.graph.initializer if t.name in used]
    d = next(
        t
        for t in proto.graph.initializer
        if t.name == "model.position_embedding.weight"
    ).dims[1]
    C = next(
        t for t in proto.graph.initializer if t.name == "model.vocab_head.bias"
    ).dims[0]
    for node in nodes:
        node.input[:] = ["updated" if i == TAIL_INPUT else i for i in node.input]
    graph = helper.make_graph(
        nodes,
        f"{MODEL}_tail",
        [helper.make_tensor_value_info("updated", onnx.TensorProto.FLOAT, [1, d])],
        [helper.make_tensor_value_info("logits", onnx.TensorProto.FLOAT, [1, C])],
        inits,
    )
    tail = helper.make_model(
        graph, opset_imports=list(proto.opset_import), ir_version=proto.ir_version
    )
    onnx.checker.check_model(tail)
    tail, _ = share_weights(tail, shipped, Path(onnx_path).name)
    meta = tail.metadata_props.add()
    meta.key, meta.value = WEIGHTS_KEY, file_sha256(onnx_path)
    return tail.SerializeToString()


def build(art: Artefacts) -> dict:
    path = art.model_onnx(MODEL)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run `python -m export onnx` first")
    manifest = json.loads(art.manifest.read_text())
    entry = next(m for m in manifest["models"] if m["name"] == MODEL)
    weights = attention_weights(path)
    doc = {
        "schema": SCHEMA,
        "model": MODEL,
        "inputs": {path.relative_to(art.root).as_posix(): file_sha256(path)},
        "d_model": int(entry["d_model"]),
        "heads": int(entry["heads"]),
        "head_dim": int(entry["head_dim"]),
        "orientation": ORIENTATION,
    }
    for key in sorted(weights):
        doc[key] = _float32_list(weights[key])
    tail = tail_path(art)
    if tail.is_file():  # the tail graph, written beside the model by write(): its bytes are checked like the model's
        doc["tail"] = {
            "file": tail.relative_to(art.root).as_posix(),
            "sha256": file_sha256(tail),
            "bytes": tail.stat().st_size,
            "external_path": path.name,
        }
    return doc


def write(art: Artefacts | None = None, log=print) -> Path:
    art = art or Artefacts()
    atomic.write_bytes(tail_path(art), tail_graph(art.model_onnx(MODEL)))
    path = atomic.write_json(art.build_weights, build(art), indent=None)
    log(f"wrote {path}")
    return path


def stale_inputs(art: Artefacts | None = None) -> list[str]:
    """Inputs whose bytes differ from the ones the committed file was computed from."""
    art = art or Artefacts()
    recorded = json.loads(art.build_weights.read_text()).get("inputs", {})
    return sorted(
        name
        for name, digest in recorded.items()
        if not (art.root / name).is_file() or file_sha256(art.root / name) != digest
    )


def stage(ctx) -> None:
    """The stage graph's entry (export/stages.py): write build_weights.json and the tail graph."""
    write(ctx.art)
