"""Export the seed-11 checkpoints to ONNX, shrink their weights, and prove parity.

Each model becomes one self-contained file (no external ``.onnx.data``):

* input ``ids``: int64 [batch, 64], dynamic batch;
* input ``head_mask`` (attention models only): float32 [heads], one number
  per head multiplying that head's message before ``W_O`` (1 keeps the head,
  0 knocks it out), the same for every row of the batch. It is a required
  input that callers feed with ones by default (``feeds`` below; the
  browser's ``ModelRunner`` does the same). An initializer-backed input would
  be optional in onnxruntime for Python, but onnxruntime-web only accepts the
  graph's required inputs ("invalid input 'head_mask'"), and such an input
  also blocks constant folding with a warning on every session start;
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

    def forward(self, ids, head_mask=None):
        if self.attention:
            return self.model(ids, return_attention=True, head_mask=head_mask)
        return self.model(ids)


def to_onnx(model) -> onnx.ModelProto:
    wrapper = _Exportable(model).eval()
    outputs = ["logits", "attention"] if wrapper.attention else ["logits"]
    example = torch.zeros(2, model.T, dtype=torch.long)
    example[:, -3:] = torch.tensor([1, 5, 6])
    args, inputs = (example,), ["ids"]
    if wrapper.attention:
        args, inputs = (example, torch.ones(model.heads)), ["ids", "head_mask"]
    buf = io.BytesIO()
    torch.onnx.export(wrapper, args, buf, input_names=inputs, output_names=outputs,
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


def feeds(sess, ids: np.ndarray, head_mask=None) -> dict:
    """The inputs of one run: ``ids``, plus ``head_mask`` (ones unless given) when the model has one."""
    out = {"ids": np.asarray(ids, dtype=np.int64)}
    shapes = {i.name: i.shape for i in sess.get_inputs()}
    if "head_mask" in shapes:
        mask = np.ones(shapes["head_mask"][0], dtype=np.float32) if head_mask is None else head_mask
        out["head_mask"] = np.asarray(mask, dtype=np.float32)
    elif head_mask is not None:
        raise ValueError("this model has no head_mask input (the MLP has no heads)")
    return out


def ort_logits(sess, x: np.ndarray, batch: int = 1024, head_mask=None) -> np.ndarray:
    return np.concatenate([sess.run(["logits"], feeds(sess, x[i:i + batch], head_mask))[0]
                           for i in range(0, len(x), batch)])


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


def ort_predictor(sess, head_mask=None):
    return lambda window: sess.run(["logits"], feeds(sess, window, head_mask))[0][0]


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
        mask_diff = mask_parity(shipped_model, sess, parity_x)
        if mask_diff > PARITY_TOL:
            raise AssertionError(f"{name}: with some head mask onnxruntime differs from PyTorch by {mask_diff:.2e}")
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
                         "inputs": ["ids", "head_mask"] if heads else ["ids"],
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


def all_head_masks(heads: int) -> list[list[float]]:
    """Every 0/1 mask of ``heads`` heads (16 for four heads), all ones first."""
    return [[float((k >> (heads - 1 - h)) & 1) for h in range(heads)] for k in range(2 ** heads - 1, -1, -1)]


def compact_encoding(path: Path) -> dict:
    """The encoding a compact checkpoint was stored with: parameter name -> "int8" | "fp16"."""
    saved = torch.load(path, map_location="cpu", weights_only=True)
    return {**{k: "int8" for k in saved["int8"]}, **{k: "fp16" for k in saved.get("float16", {})}}


def mask_parity(model, sess, x: np.ndarray) -> float:
    """Largest |logit difference| between PyTorch and onnxruntime over every head mask (0 for the MLP)."""
    heads = getattr(model, "heads", 0)
    worst = 0.0
    for mask in all_head_masks(heads) if heads else [None]:
        with torch.no_grad():
            ref = model(torch.from_numpy(x)) if mask is None else model(torch.from_numpy(x), head_mask=torch.tensor(mask))
        worst = max(worst, float(np.abs(ort_logits(sess, x, head_mask=mask) - ref.numpy()).max()))
    return worst


def reexport(checkpoints: Path, out: Path, data=None, log=print) -> dict:
    """Rebuild the ONNX files from the shipped compact checkpoints, without the training runs.

    The compact checkpoints hold exactly the values the ONNX files store, so
    the weights come out unchanged; what changes is the graph (for example the
    ``head_mask`` input). Before anything is written: PyTorch and onnxruntime
    agree within PARITY_TOL for every head mask, the greedy preset
    continuation equals the saved one, and the test perplexity equals the
    recorded shipped one. Then the models, manifest and parity vectors are
    written, and the byte sizes in evidence.json's ``onnx`` section updated.
    """
    from .corpus import corpus_of_evidence

    evidence_path = out / "evidence.json"
    if not evidence_path.is_file():
        raise FileNotFoundError(f"{evidence_path} not found: run `python -m export evidence` first")
    evidence = json.loads(evidence_path.read_text())
    torch.set_num_threads(1)  # as the sessions; the checks do not depend on it
    corpus = corpus_of_evidence(evidence, data)
    itos, T, test = corpus.vocab.itos, corpus.T, corpus.windows["test"]
    parity_x, _ = test.batch(torch.randperm(len(test), generator=torch.Generator().manual_seed(PRESET_SEED))[:64])
    parity_x = parity_x.numpy()
    preset = evidence["preset"]
    preset_history = prompt_history(itos, preset["prompt"])
    parity = {"prompts": [{"text": p, "window": context_window(prompt_history(itos, p), T), "logits": {}}
                          for p in parity_prompts(evidence)]}
    files, manifest = {}, []
    for name in MODEL_NAMES:
        path = checkpoints / f"{name}-seed{PRESET_SEED}.pt"
        if not path.is_file():
            raise FileNotFoundError(f"{path} not found: restore wasm_assets/checkpoints/ or run `python -m export onnx`")
        model, encoding = load_compact(path), compact_encoding(path)
        proto = quantize_initializers(to_onnx(model), model, encoding) if encoding else to_onnx(model)
        data_bytes = proto.SerializeToString()
        sess = session(data_bytes)
        diff = mask_parity(model, sess, parity_x)
        if diff > PARITY_TOL:
            raise AssertionError(f"{name}: onnxruntime differs from PyTorch by {diff:.2e} (tolerance {PARITY_TOL})")
        ids, ended = generate_ids(ort_predictor(sess), preset_history, preset["max_new_tokens"], T=T)
        saved = preset["continuations"][name]
        if ids != saved["ids"] or ended != saved["ended_with_eos"]:
            raise AssertionError(f"{name}: the greedy preset continuation changed; nothing was written")
        report = evidence["onnx"][name]
        ppl = ort_perplexity(sess, test)
        if not math.isclose(ppl, report["test_perplexity_shipped"], rel_tol=1e-6):
            raise AssertionError(f"{name}: test perplexity {ppl:.6f} differs from the recorded "
                                 f"{report['test_perplexity_shipped']:.6f}; nothing was written")
        for p in parity["prompts"]:
            p["logits"][name] = [float(v) for v in ort_predictor(sess)(np.asarray([p["window"]], dtype=np.int64))]
        report["bytes"] = len(data_bytes)
        report["float32_bytes"] = len(to_onnx(model).SerializeToString())
        for label, tried in report.get("tried", {}).items():
            small = rounded_model(model, ENCODINGS[label])
            tried["bytes"] = len(quantize_initializers(to_onnx(small), small, ENCODINGS[label]).SerializeToString())
        heads = getattr(model, "heads", 0)
        files[name] = data_bytes
        manifest.append({"name": name, "label": MODEL_LABELS[name], "file": f"models/{name}.onnx",
                         "bytes": len(data_bytes), "sha256": sha256(data_bytes), "heads": heads,
                         "parameters": sum(p.numel() for p in model.parameters()),
                         "inputs": ["ids", "head_mask"] if heads else ["ids"],
                         "outputs": ["logits", "attention"] if heads else ["logits"],
                         "encoding": report["encoding"]})
        log(f"{name}: {len(data_bytes) / 1e6:.2f} MB, largest PyTorch/onnxruntime difference over "
            f"{2 ** heads if heads else 1} head mask(s) {diff:.1e}, preset continuation unchanged")
    for name, data_bytes in files.items():
        atomic.write_bytes(out / "models" / f"{name}.onnx", data_bytes)
    atomic.write_json(out / "models" / "manifest.json", {"models": manifest, "C": len(itos), "T": T, "opset": OPSET},
                      indent=1)
    atomic.write_json(out / "parity.json", parity, indent=None)
    validate(evidence)
    atomic.write_json(evidence_path, evidence)
    return evidence["onnx"]
