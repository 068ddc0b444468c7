"""How the shipped ONNX files store their weights: int8 with one scale per row, or float16, widened in the graph.

Both exporters use it: the shipped models (export/onnx_export.py) and page 4's
teaching graphs (export/teaching_graph.py), whose weights must be stored
exactly as the shipped file's so that they can read them from its bytes.
"""

from __future__ import annotations

import copy

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from .checkpoints import plan, row_quantize

OPSET = 17


def quantize_initializers(
    proto: onnx.ModelProto, model, encoding: str = "int8"
) -> onnx.ModelProto:
    """Store the rounded weights of ``proto`` as int8 + DequantizeLinear or float16 + Cast.

    Initializers are matched to parameters by value: the exporter may keep a
    weight as is (Gemm) or transposed (MatMul), so the int8 scale axis follows.
    """
    chosen = plan(model, encoding)
    proto = copy.deepcopy(proto)
    graph = proto.graph
    params = {n: p.detach().numpy() for n, p in model.named_parameters() if n in chosen}
    new_nodes, keep = [], []
    for init in graph.initializer:
        arr = numpy_helper.to_array(init)
        match = None
        if arr.dtype == np.float32 and arr.ndim == 2:
            for pname, p in params.items():
                if arr.shape == p.shape and np.array_equal(arr, p):
                    match = (pname, 0)
                elif arr.shape == p.T.shape and np.array_equal(arr, p.T):
                    match = (pname, 1)
        if match is None:
            keep.append(init)
            continue
        pname, axis = match
        base = init.name
        if chosen[pname] == "fp16":
            keep.append(numpy_helper.from_array(arr.astype(np.float16), f"{base}_fp16"))
            new_nodes.append(
                helper.make_node(
                    "Cast",
                    [f"{base}_fp16"],
                    [base],
                    name=f"widen_{base}",
                    to=TensorProto.FLOAT,
                )
            )
            continue
        q, scale = row_quantize(torch.from_numpy(params[pname]))
        if axis == 1:
            q = np.ascontiguousarray(q.T)
        keep.append(numpy_helper.from_array(q, f"{base}_int8"))
        keep.append(numpy_helper.from_array(scale, f"{base}_scale"))
        keep.append(
            numpy_helper.from_array(np.zeros_like(scale, dtype=np.int8), f"{base}_zero")
        )
        new_nodes.append(
            helper.make_node(
                "DequantizeLinear",
                [f"{base}_int8", f"{base}_scale", f"{base}_zero"],
                [base],
                name=f"dequantize_{base}",
                axis=axis,
            )
        )
    del graph.initializer[:]
    graph.initializer.extend(keep)
    nodes = list(graph.node)
    del graph.node[:]
    graph.node.extend(new_nodes + nodes)
    onnx.checker.check_model(proto)
    return proto
