"""The "Build it yourself" exercise's weights: the four-head model's attention layers, read from the shipped ONNX.

The learner writes multi-head attention in plain Python and checks it against
the teaching graph, which runs the shipped ``four_heads.onnx``. So the weights
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

import hashlib
import json
from pathlib import Path

import numpy as np

from .. import atomic
from ..artefacts import Artefacts

MODEL = "four_heads"
SCHEMA = "mha-build-weights/1"
LAYERS = ("W_Q", "W_K", "W_V", "W_O")
ORIENTATION = "[out, in], as nn.Linear stores it: y[o] = sum over i of W[o][i] * x[i], plus b[o]"


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _float32_list(array: np.ndarray) -> list:
    """Each float32 as the shortest decimal that reads back to the same float32 (half the bytes of float64's)."""
    if array.ndim == 1:
        return [float(np.format_float_positional(np.float32(x), unique=True, trim="-")) for x in array]
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
                attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
                w = init[node.input[1]]
                found[layer] = w if attrs.get("transB", 0) else w.T
                found["b" + layer[1:]] = init[node.input[2]]
    missing = [k for k in (*LAYERS, *("b" + layer[1:] for layer in LAYERS)) if k not in found]
    if missing:
        raise ValueError(f"{onnx_path.name}: no {', '.join(missing)} found in its graph; "
                         "was it exported by `python -m export onnx`?")
    return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in found.items()}


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
        "inputs": {path.relative_to(art.root).as_posix(): _sha256(path)},
        "d_model": int(entry["d_model"]),
        "heads": int(entry["heads"]),
        "head_dim": int(entry["head_dim"]),
        "orientation": ORIENTATION,
    }
    for key in sorted(weights):
        doc[key] = _float32_list(weights[key])
    return doc


def write(art: Artefacts | None = None, log=print) -> Path:
    art = art or Artefacts()
    path = atomic.write_json(art.build_weights, build(art), indent=None)
    log(f"wrote {path}")
    return path


def stale_inputs(art: Artefacts | None = None) -> list[str]:
    """Inputs whose bytes differ from the ones the committed file was computed from."""
    art = art or Artefacts()
    recorded = json.loads(art.build_weights.read_text()).get("inputs", {})
    return sorted(name for name, digest in recorded.items()
                  if not (art.root / name).is_file() or _sha256(art.root / name) != digest)


def stage(ctx) -> None:
    """The stage graph's entry (export/stages.py): write build_weights.json."""
    write(ctx.art)
