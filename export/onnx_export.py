"""Export the seed-11 checkpoints to ONNX, shrink their weights, and prove parity.

Each model becomes one self-contained file (no external ``.onnx.data``):

* input ``ids``: int64 [batch, 64], dynamic batch;
* output ``logits``: float32 [batch, C];
* output ``attention`` (attention models only): float32 [batch, heads, 64],
  the final query's weights per head. The final-query path is exported, so
  this output costs nothing extra; the full receiver-by-receiver map is
  computed from the same weights in the lesson pages instead.

Weight encoding: float32 files are 5-9 MB each, too heavy for a phone. The
large weight matrices are stored smaller and widened back to float32 inside
the graph (``DequantizeLinear`` for int8 with one scale per row, ``Cast`` for
float16); all arithmetic stays float32. Candidates are tried smallest first
(``ENCODINGS``): int8 everywhere, int8 with a float16 output layer, float16
everywhere. The PyTorch model is first given exactly the stored values, so
"what runs in ONNX" is a PyTorch model we test against (logits within 1e-4).
The first candidate whose greedy preset continuation is unchanged and whose
test perplexity moves by less than 0.5 % ships; if none does, float32 ships.
Every candidate's figures go to ``evidence.json`` (key ``onnx``); the report in
bench/RESULTS.md is printed by ``bench/onnx_sizes.py``.
"""
from __future__ import annotations

import copy
import hashlib
import io
import json
import math
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from . import atomic
from .corpus import prepare_corpus
from .data import load_stories
from .evidence import PRESET_SEED, validate
from .generate import generate_ids, prompt_history
from .models import MODEL_LABELS, MODEL_NAMES
from .train import load_checkpoint, run_dir
from .windows import context_window

OPSET = 17
MIN_QUANT_ELEMENTS = 8192  # smaller tensors stay float32: the saving is negligible
QUANTIZED = ("token_embedding.weight", "hidden_layer.weight", "vocab_head.weight",
             "W_Q.weight", "W_K.weight", "W_V.weight", "W_O.weight")
MAX_PPL_CHANGE = 0.005
PARITY_TOL = 1e-4


class _Exportable(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.attention = hasattr(model, "heads")

    def forward(self, ids):
        if self.attention:
            return self.model(ids, return_attention=True)
        return self.model(ids)


def to_onnx(model) -> onnx.ModelProto:
    wrapper = _Exportable(model).eval()
    outputs = ["logits", "attention"] if wrapper.attention else ["logits"]
    example = torch.zeros(2, model.T, dtype=torch.long)
    example[:, -3:] = torch.tensor([1, 5, 6])
    buf = io.BytesIO()
    torch.onnx.export(wrapper, (example,), buf, input_names=["ids"], output_names=outputs,
                      dynamic_axes={"ids": {0: "batch"}, **{o: {0: "batch"} for o in outputs}},
                      opset_version=OPSET, dynamo=False)
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto)
    return proto


def row_quantize(w: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 per row: w ~= q * scale[:, None]."""
    a = w.detach().numpy().astype(np.float32)
    scale = np.abs(a).max(axis=1) / 127.0
    scale[scale == 0] = 1.0  # the PAD row is all zeros
    scale = scale.astype(np.float32)
    q = np.clip(np.rint(a / scale[:, None]), -127, 127).astype(np.int8)
    return q, scale


# Candidate encodings, smallest first: parameter name -> "int8" | "fp16".
# The first one that keeps the greedy preset continuation and moves test
# perplexity by less than MAX_PPL_CHANGE ships; float32 is the last resort.
ENCODINGS = {
    "int8": {n: "int8" for n in QUANTIZED},
    "int8 + float16 output layer": {**{n: "int8" for n in QUANTIZED}, "vocab_head.weight": "fp16"},
    "float16": {n: "fp16" for n in QUANTIZED},
}
DESCRIPTIONS = {
    "int8": "int8 weights (per-row scale), float32 compute",
    "int8 + float16 output layer": "int8 weights (per-row scale) with a float16 output layer, float32 compute",
    "float16": "float16 weights, float32 compute",
    "float32": "float32",
}


def _plan(model, encoding: dict) -> dict:
    return {n: encoding[n] for n, p in model.named_parameters()
            if n in encoding and p.numel() >= MIN_QUANT_ELEMENTS}


def rounded_model(model, encoding: dict | None = None):
    """A copy of ``model`` whose large weights hold exactly the values the encoding stores."""
    plan = _plan(model, ENCODINGS["int8"] if encoding is None else encoding)
    model = copy.deepcopy(model)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if plan.get(name) == "int8":
                q, scale = row_quantize(p)
                p.copy_(torch.from_numpy(q.astype(np.float32) * scale[:, None]))
            elif plan.get(name) == "fp16":
                p.copy_(p.half().float())
    return model


def quantize_initializers(proto: onnx.ModelProto, model, encoding: dict | None = None) -> onnx.ModelProto:
    """Store the rounded weights of ``proto`` as int8 + DequantizeLinear or float16 + Cast.

    Initializers are matched to parameters by value: the exporter may keep a
    weight as is (Gemm) or transposed (MatMul), so the int8 scale axis follows.
    """
    plan = _plan(model, ENCODINGS["int8"] if encoding is None else encoding)
    proto = copy.deepcopy(proto)
    graph = proto.graph
    params = {n: p.detach().numpy() for n, p in model.named_parameters() if n in plan}
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
        if plan[pname] == "fp16":
            keep.append(numpy_helper.from_array(arr.astype(np.float16), f"{base}_fp16"))
            new_nodes.append(helper.make_node("Cast", [f"{base}_fp16"], [base], name=f"widen_{base}",
                                              to=TensorProto.FLOAT))
            continue
        q, scale = row_quantize(torch.from_numpy(params[pname]))
        if axis == 1:
            q = np.ascontiguousarray(q.T)
        keep.append(numpy_helper.from_array(q, f"{base}_int8"))
        keep.append(numpy_helper.from_array(scale, f"{base}_scale"))
        keep.append(numpy_helper.from_array(np.zeros_like(scale, dtype=np.int8), f"{base}_zero"))
        new_nodes.append(helper.make_node("DequantizeLinear", [f"{base}_int8", f"{base}_scale", f"{base}_zero"],
                                          [base], name=f"dequantize_{base}", axis=axis))
    del graph.initializer[:]
    graph.initializer.extend(keep)
    nodes = list(graph.node)
    del graph.node[:]
    graph.node.extend(new_nodes + nodes)
    onnx.checker.check_model(proto)
    return proto


def save_compact(path: Path, model, encoding: dict | None = None) -> None:
    """The shipped (rounded) model: int8 rows + scales, float16 or float32 tensors. Exact and small."""
    plan = _plan(model, encoding or {})
    int8, scales, half, rest = {}, {}, {}, {}
    for name, p in model.state_dict().items():
        if plan.get(name) == "int8":
            q, scale = row_quantize(p)
            int8[name], scales[name] = torch.from_numpy(q), torch.from_numpy(scale)
        elif plan.get(name) == "fp16":
            half[name] = p.half()
        else:
            rest[name] = p.clone()
    atomic.save_torch(path, {"config": model.config(), "int8": int8, "scales": scales, "float16": half,
                             "float": rest})


def load_compact(path: str | Path):
    """Rebuild the shipped (rounded) PyTorch model from ``save_compact``'s file."""
    from .models import build_model

    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
        cfg = saved["config"]
        name = "mlp" if cfg["kind"] == "mlp" else ("four_heads" if cfg["heads"] == 4 else "one_head")
        model = build_model(name, cfg["C"], cfg["T"], cfg["d_model"], cfg["hidden"])
        state = dict(saved["float"])
        state.update({k: v.float() for k, v in saved.get("float16", {}).items()})
        for k, q in saved["int8"].items():
            state[k] = q.float() * saved["scales"][k][:, None]
        model.load_state_dict(state)
    except FileNotFoundError:
        raise
    except Exception as exc:
        raise ValueError(f"checkpoint {path} is damaged or not a compact model file ({type(exc).__name__}: {exc})") from None
    return model.eval()


def session(proto_bytes: bytes):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    return ort.InferenceSession(proto_bytes, opts, providers=["CPUExecutionProvider"])


def ort_logits(sess, x: np.ndarray, batch: int = 1024) -> np.ndarray:
    return np.concatenate([sess.run(["logits"], {"ids": x[i:i + batch]})[0] for i in range(0, len(x), batch)])


def ort_perplexity(sess, windows) -> float:
    x, y = windows.all()
    x, y = x.numpy(), y.numpy()
    total = 0.0
    for i in range(0, len(x), 2048):
        logits = ort_logits(sess, x[i:i + 2048]).astype(np.float64)
        m = logits.max(axis=1, keepdims=True)
        logz = (m + np.log(np.exp(logits - m).sum(axis=1, keepdims=True)))[:, 0]
        total += float((logz - logits[np.arange(len(logits)), y[i:i + 2048]]).sum())
    return math.exp(total / len(y))


@torch.no_grad()
def torch_perplexity(model, windows) -> float:
    from .train import mean_loss

    return math.exp(mean_loss(model, windows))


def ort_predictor(sess):
    return lambda window: sess.run(["logits"], {"ids": window})[0][0]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parity_prompts(evidence: dict) -> list[str]:
    long_story = evidence["stories"]["long"][0]["text"]
    return [evidence["preset"]["prompt"], "The little robot wanted to fly to the moon, so it",
            " ".join(long_story.split()[:120])]


def export_all(runs: Path, out: Path, data=None, stories: int = 6000, log=print) -> dict:
    """Export, compare encodings, check parity, write models + manifest + parity vectors."""
    evidence_path = out / "evidence.json"
    if not evidence_path.is_file():
        raise FileNotFoundError(f"{evidence_path} not found: run `python -m export evidence` first")
    evidence = json.loads(evidence_path.read_text())
    corpus = prepare_corpus(load_stories(data, stories, log=lambda m: None),
                            C=evidence["vocabulary"]["C"], T=evidence["vocabulary"]["T"])
    if corpus.source.sha256 != evidence["source"]["sha256"]:
        raise ValueError("the data file differs from the one evidence.json was made from")
    itos, T = corpus.vocab.itos, corpus.T
    test = corpus.windows["test"]
    gen = torch.Generator().manual_seed(PRESET_SEED)
    parity_x, _ = test.batch(torch.randperm(len(test), generator=gen)[:64])
    parity_x = parity_x.numpy()
    prompts = parity_prompts(evidence)
    preset_history = prompt_history(itos, evidence["preset"]["prompt"])
    report, manifest, parity = {}, [], {"prompts": [{"text": p, "window": context_window(prompt_history(itos, p), T),
                                                      "logits": {}} for p in prompts]}
    (out / "models").mkdir(parents=True, exist_ok=True)
    for name in MODEL_NAMES:
        ckpt = run_dir(runs, name, PRESET_SEED) / "best.pt"
        if not ckpt.is_file():
            raise FileNotFoundError(f"{ckpt} not found: train seed {PRESET_SEED} first")
        model = load_checkpoint(ckpt)
        float_proto = to_onnx(model)
        float_bytes = float_proto.SerializeToString()
        f_sess = session(float_bytes)
        ppl_torch = torch_perplexity(model, test)
        ppl_float = ort_perplexity(f_sess, test)
        greedy_torch, _ = generate_ids(model, preset_history, 24)
        with torch.no_grad():
            ref_float = model(torch.from_numpy(parity_x))
            ref_float = (ref_float[0] if isinstance(ref_float, tuple) else ref_float).numpy()
        float_diff = float(np.abs(ort_logits(f_sess, parity_x) - ref_float).max())
        greedy_float_ort, _ = generate_ids(ort_predictor(f_sess), preset_history, 24, T=T)
        if greedy_float_ort != greedy_torch:
            raise AssertionError(f"{name}: greedy continuation differs between PyTorch and onnxruntime")
        if float_diff > PARITY_TOL:
            raise AssertionError(f"{name}: onnxruntime logits differ from PyTorch by {float_diff:.2e}")
        tried, chosen = {}, None
        for label, encoding in ENCODINGS.items():
            small = rounded_model(model, encoding)
            enc_bytes = quantize_initializers(to_onnx(small), small, encoding).SerializeToString()
            enc_sess = session(enc_bytes)
            with torch.no_grad():
                ref = small(torch.from_numpy(parity_x))
                ref = (ref[0] if isinstance(ref, tuple) else ref).numpy()
            diff = float(np.abs(ort_logits(enc_sess, parity_x) - ref).max())
            if diff > PARITY_TOL:
                raise AssertionError(f"{name} ({label}): onnxruntime differs from the rounded PyTorch model by {diff:.2e}")
            ppl = ort_perplexity(enc_sess, test)
            greedy, _ = generate_ids(ort_predictor(enc_sess), preset_history, 24, T=T)
            ok = greedy == greedy_torch and abs(ppl / ppl_torch - 1) < MAX_PPL_CHANGE
            tried[label] = {"bytes": len(enc_bytes), "test_perplexity": ppl, "perplexity_change": ppl / ppl_torch - 1,
                            "greedy_unchanged": greedy == greedy_torch, "max_abs_logit_diff": diff, "accepted": ok}
            log(f"{name} {label}: {len(enc_bytes) / 1e6:.2f} MB, perplexity {ppl_torch:.3f} -> {ppl:.3f} "
                f"({100 * (ppl / ppl_torch - 1):+.3f} %), greedy unchanged {greedy == greedy_torch}")
            if ok:
                chosen = (label, encoding, small, enc_bytes, enc_sess, ppl)
                break
        if chosen is None:
            chosen = ("float32", {}, model, float_bytes, f_sess, ppl_float)
        label, encoding, shipped_model, shipped, sess, ppl_shipped = chosen
        path = out / "models" / f"{name}.onnx"
        atomic.write_bytes(path, shipped)
        save_compact(out / "checkpoints" / f"{name}-seed{PRESET_SEED}.pt", shipped_model, encoding)
        for p in parity["prompts"]:
            p["logits"][name] = [float(v) for v in ort_predictor(sess)(np.asarray([p["window"]], dtype=np.int64))]
        heads = getattr(model, "heads", 0)
        report[name] = {
            "file": f"models/{name}.onnx", "encoding": DESCRIPTIONS[label], "bytes": len(shipped),
            "float32_bytes": len(float_bytes), "test_perplexity_torch": ppl_torch,
            "test_perplexity_onnx_float32": ppl_float, "test_perplexity_shipped": ppl_shipped,
            "max_abs_logit_diff_float32": float_diff, "tried": tried, "opset": OPSET,
        }
        manifest.append({"name": name, "label": MODEL_LABELS[name], "file": f"models/{name}.onnx",
                         "bytes": len(shipped), "sha256": sha256(shipped), "heads": heads,
                         "parameters": sum(p.numel() for p in model.parameters()),
                         "outputs": ["logits", "attention"] if heads else ["logits"],
                         "encoding": report[name]["encoding"]})
        log(f"{name}: shipping {report[name]['encoding']} ({len(shipped) / 1e6:.2f} MB)")
    atomic.write_json(out / "models" / "manifest.json", {"models": manifest, "C": len(itos), "T": T,
                                                         "opset": OPSET}, indent=1)
    atomic.write_json(out / "parity.json", parity, indent=None)
    evidence["onnx"] = report
    evidence["artefacts"].update({"models": "models/manifest.json", "parity": "parity.json"})
    validate(evidence)
    atomic.write_json(evidence_path, evidence)
    return report
