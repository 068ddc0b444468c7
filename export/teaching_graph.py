"""The teaching graphs: ``forward_full`` of a shipped attention model, every intermediate tensor an output.

Page 4's forward-pass stepper walks a learner's own prompt through the
trained model one operation at a time. Its numbers come from onnxruntime
running this graph, not from a second implementation in JavaScript.

* input ``ids``: int64 [1, T];
* outputs (``OUTPUTS``): token_rows [1, T, d] and position_rows [1, T, d]
  (the two lookups whose sum is E, from the model's own embedding tables), E [1, T, d], Q, K, V [1, heads, T, head_dim],
  scores and A [1, heads, T, T], mask (bool) [1, T, T], messages
  [1, heads, T, head_dim], joined, update, updated [1, T, d], hidden
  [1, hidden], logits [1, C], head_parts [1, heads, T, d] (head h's message times its own
  columns of W_O's weight) and wo_bias [1, 1, d]: the parts plus the bias add up to update.

One copy of the weights: the teaching graph stores (almost) none of its own.
Each of its initializers whose bytes the shipped graph already holds is an
ONNX *external data* reference into the shipped file itself: location
``<name>.onnx``, and the offset and length of that tensor's ``raw_data``
inside the shipped file's protobuf encoding (``raw_data_spans``). The browser
hands the shipped file's bytes, downloaded once for both sessions, to
onnxruntime-web as that external file; onnxruntime for Python finds it beside
the teaching file. Only what the shipped graph lacks stays inline (W_O
transposed for MatMul, about 16 KB). The teaching graph records the shipped
file's SHA-256 (metadata ``weights_sha256``), so a stale one is refused
(``check_fresh``) instead of reading the wrong bytes.

The same compact (int8, float16) weights as the shipped file: PyTorch's
``forward_full`` on the compact checkpoint is the reference (``parity``).
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import TensorProto

from . import atomic
from .artefacts import Artefacts
from .checkpoints import load_compact
from .digest import file_sha256, sha256_bytes
from .models import attention_models
from .onnx_weights import OPSET, quantize_initializers
from .windows import context_window

# forward_full's outputs, in its order (``update`` is W_O's output, before the residual)
OUTPUTS = (
    "token_rows",
    "position_rows",
    "E",
    "Q",
    "K",
    "V",
    "scores",
    "mask",
    "A",
    "messages",
    "joined",
    "update",
    "updated",
    "hidden",
    "logits",
    "head_parts",
    "wo_bias",
)
# the registry's shipped attention models
ATTENTION_MODELS = tuple(s.name for s in attention_models())
PARITY_TOL = 1e-4  # as the shipped graphs' check (export.onnx_export.PARITY_TOL); the tests use tests/tolerance.py
WEIGHTS_KEY = "weights_sha256"


class StaleTeachingGraph(ValueError):
    pass


def forward_full_outputs(model, window: list[int]) -> dict[str, np.ndarray]:
    """PyTorch's forward_full on one window, with ``update`` (W_O's output) taken from the model itself."""
    x = torch.tensor([window], dtype=torch.long)
    with torch.no_grad():
        out = model.forward_full(x)
        out.update(_extras(model, x, out))
    return {k: out[k].numpy() for k in OUTPUTS}


def _extras(model, ids, out) -> dict:
    """What the stepper shows that forward_full does not return: the two rows E sums, W_O's own output, and
    that output as the heads' parts: head h's message times its own columns of W_O's weight ([1, h, T, d]),
    which with W_O's bias ([1, 1, d]) add up to ``update``."""
    positions = torch.arange(ids.shape[1], device=ids.device)
    # [out, h, dh]
    weight = model.W_O.weight.view(model.d_model, model.heads, model.head_dim)
    return {
        "token_rows": model.token_embedding(ids),
        "position_rows": model.position_embedding(positions)[None],
        "update": model.W_O(out["joined"]),
        "head_parts": torch.einsum("bhtk,ohk->bhto", out["messages"], weight),
        "wo_bias": model.W_O(torch.zeros_like(out["joined"][:, :1])),
    }


class _WithUpdate(torch.nn.Module):
    """forward_full plus ``_extras``: ``update`` is W_O's own output, not E subtracted back from ``updated``."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        out = self.model.forward_full(ids)
        out.update(_extras(self.model, ids, out))
        return tuple(out[k] for k in OUTPUTS)


def to_teaching_onnx(model) -> onnx.ModelProto:
    """forward_full of ``model`` (the compact checkpoint's model) with its weights stored as the shipped file's."""
    example = torch.zeros(1, model.T, dtype=torch.long)
    example[0, -3:] = torch.tensor([1, 5, 6])
    buf = io.BytesIO()
    torch.onnx.export(
        _WithUpdate(model).eval(),
        (example,),
        buf,
        input_names=["ids"],
        output_names=list(OUTPUTS),
        opset_version=OPSET,
        dynamo=False,
    )
    proto = onnx.load_from_string(buf.getvalue())
    # An output that is a constant (the position rows of a fixed T) comes out under its
    # initializer's name; an Identity gives it its own.
    for out, name in zip(proto.graph.output, OUTPUTS):
        if out.name != name:
            proto.graph.node.append(
                onnx.helper.make_node(
                    "Identity", [out.name], [name], name=f"output_{name}"
                )
            )
            out.name = name
    if model.encoding != "float32":
        proto = quantize_initializers(proto, model, model.encoding)
    onnx.checker.check_model(proto)
    return proto


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7


def _fields(data: bytes, start: int, end: int):
    """(field number, wire type, value start, value end) of each field of one protobuf message."""
    i = start
    while i < end:
        key, i = _varint(data, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, j = _varint(data, i)
            yield field, wire, i, j
        elif wire == 1:
            yield field, wire, i, i + 8
            j = i + 8
        elif wire == 2:
            n, i = _varint(data, i)
            yield field, wire, i, i + n
            j = i + n
        elif wire == 5:
            yield field, wire, i, i + 4
            j = i + 4
        else:
            raise ValueError(f"unexpected protobuf wire type {wire}")
        i = j


# ModelProto.graph = 7, GraphProto.initializer = 5, TensorProto.data_type = 2, .name = 8, .raw_data = 9
def raw_data_spans(model_bytes: bytes) -> dict[str, tuple[int, int, int]]:
    """Initializer name -> (data type, offset, length) of its raw_data inside the serialized model."""
    spans = {}
    for field, _, g0, g1 in _fields(model_bytes, 0, len(model_bytes)):
        if field != 7:
            continue
        for f, _, t0, t1 in _fields(model_bytes, g0, g1):
            if f != 5:
                continue
            name, dtype, span = None, None, None
            for tf, _, v0, v1 in _fields(model_bytes, t0, t1):
                if tf == 8:
                    name = model_bytes[v0:v1].decode()
                elif tf == 2:
                    dtype = _varint(model_bytes, v0)[0]
                elif tf == 9:
                    span = (v0, v1 - v0)
            if name is not None and span is not None:
                spans[name] = (dtype if dtype is not None else TensorProto.FLOAT, *span)
    return spans


def share_weights(
    proto: onnx.ModelProto, shipped: bytes, location: str
) -> tuple[onnx.ModelProto, int]:
    """Point every initializer of ``proto`` whose bytes ``shipped`` holds at them; returns (proto, bytes shared)."""
    by_content = {}
    for _, (dtype, offset, length) in raw_data_spans(shipped).items():
        by_content.setdefault(
            (dtype, shipped[offset : offset + length]), (offset, length)
        )
    shared = 0
    for init in proto.graph.initializer:
        if not init.raw_data:
            continue
        found = by_content.get((init.data_type, init.raw_data))
        if found is None:
            continue
        offset, length = found
        shared += length
        init.ClearField("raw_data")
        init.data_location = TensorProto.EXTERNAL
        del init.external_data[:]
        for key, value in (
            ("location", location),
            ("offset", str(offset)),
            ("length", str(length)),
        ):
            entry = init.external_data.add()
            entry.key, entry.value = key, value
    return proto, shared


def build(artefacts: Artefacts, name: str) -> tuple[bytes, dict]:
    """The teaching graph of ``name`` (bytes) and what it shares with the shipped file."""
    model = load_compact(artefacts.checkpoint(name)).eval()
    shipped_path = artefacts.model_onnx(name)
    shipped = shipped_path.read_bytes()
    proto, shared = share_weights(to_teaching_onnx(model), shipped, shipped_path.name)
    meta = proto.metadata_props.add()
    meta.key, meta.value = WEIGHTS_KEY, sha256_bytes(shipped)
    data = proto.SerializeToString()
    return data, {"bytes": len(data), "shared_bytes": shared}


def session(path: Path):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def run(sess, window: list[int]) -> dict[str, np.ndarray]:
    values = sess.run(list(OUTPUTS), {"ids": np.asarray([window], dtype=np.int64)})
    return dict(zip(OUTPUTS, values))


def parity_windows(itos: list[str], T: int, prompts: list[str]) -> list[list[int]]:
    from .generate import prompt_history

    return [context_window(prompt_history(itos, p), T) for p in prompts]


def parity(sess, model, windows: list[list[int]]) -> float:
    """Largest |difference| between onnxruntime's and PyTorch's forward_full over every output and window."""
    worst = 0.0
    for window in windows:
        ours, ref = run(sess, window), forward_full_outputs(model, window)
        for k in OUTPUTS:
            if ours[k].shape != ref[k].shape:
                raise AssertionError(
                    f"{k}: shape {ours[k].shape} differs from PyTorch's {ref[k].shape}"
                )
            if k == "mask":
                if not np.array_equal(ours[k], ref[k]):
                    raise AssertionError("mask differs from PyTorch's")
                continue
            a, b = ours[k], ref[k]
            finite = np.isfinite(b)
            if not np.array_equal(finite, np.isfinite(a)) or not np.array_equal(
                a[~finite], b[~finite]
            ):
                raise AssertionError(
                    f"{k}: blocked (-inf) entries differ from PyTorch's"
                )
            if finite.any():
                worst = max(worst, float(np.abs(a[finite] - b[finite]).max()))
    return worst


def check_fresh(artefacts: Artefacts, name: str) -> None:
    """Refuse a teaching graph that points into another version of the shipped file."""
    path = artefacts.teaching_onnx(name)
    proto = onnx.load(str(path), load_external_data=False)
    stored = {p.key: p.value for p in proto.metadata_props}.get(WEIGHTS_KEY)
    actual = file_sha256(artefacts.model_onnx(name))
    if stored != actual:
        raise StaleTeachingGraph(
            f"{path} reads its weights from another version of {artefacts.model_onnx(name).name}; "
            "run `python -m export steps` to write it again"
        )


def write_all(
    out: Path | None = None, prompts: list[str] | None = None, log=print
) -> dict:
    """Write ``models/<name>.steps.onnx`` for both attention models, after a parity check against PyTorch."""
    import json

    artefacts = Artefacts(out)
    vocab = json.loads(artefacts.vocab.read_text())
    prompts = prompts or DEFAULT_PARITY_PROMPTS
    windows = parity_windows(vocab["itos"], vocab["T"], prompts)
    report = {}
    for name in ATTENTION_MODELS:
        data, info = build(artefacts, name)
        target = artefacts.teaching_onnx(name)
        # onnxruntime finds the external file beside the model: check in the real folder, under a temporary name
        tmp = target.with_name(f".{target.name}.check")
        tmp.write_bytes(data)
        try:
            model = load_compact(artefacts.checkpoint(name)).eval()
            diff = parity(session(tmp), model, windows)
        finally:
            tmp.unlink(missing_ok=True)
        if not diff <= PARITY_TOL:
            raise AssertionError(
                f"{name}: the teaching graph differs from PyTorch's forward_full by {diff:.2e}"
            )
        atomic.write_bytes(target, data)
        report[name] = {**info, "max_abs_diff": diff}
        log(
            f"{name}: teaching graph {info['bytes'] / 1e3:.1f} kB, {info['shared_bytes'] / 1e6:.2f} MB of weights "
            f"read from {artefacts.model_onnx(name).name}, largest difference from PyTorch {diff:.1e}"
        )
    return report


# A short prompt, one with a word outside the vocabulary, and one longer than the window (it crops).
DEFAULT_PARITY_PROMPTS = [
    "Lily found a",
    "The zorblax wanted to play with the dog",
    " ".join(["Tom and Sam went to the park to play with a big red ball ."] * 6),
]
