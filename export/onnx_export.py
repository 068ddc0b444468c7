"""Export the seed-11 checkpoints to ONNX, shrink their weights, and prove parity.

Each model becomes one self-contained file (no external ``.onnx.data``):

* input ``ids``: int64 [batch, T], dynamic batch;
* input ``head_mask`` (attention models only): float32 [heads], one number
  per head multiplying that head's message before ``W_O`` (1 keeps the head,
  0 knocks it out), the same for every row of the batch. It is a required
  input that callers feed with ones by default (``feeds`` below; the
  browser's ``ModelRunner`` does the same). An initializer-backed input would
  be optional in onnxruntime for Python, but onnxruntime-web only accepts the
  graph's required inputs ("invalid input 'head_mask'"), and such an input
  also blocks constant folding with a warning on every session start;
* output ``logits``: float32 [batch, C];
* output ``attention`` (attention models only): float32 [batch, heads, T],
  the final query's weights per head. The final-query path is exported, so
  this output costs nothing extra; the full receiver-by-receiver map is
  computed from the same weights in the lesson pages instead.

Weight encoding: float32 files are 5-9 MB each, too heavy for a phone. The
large weight matrices are stored smaller and widened back to float32 inside
the graph (``DequantizeLinear`` for int8 with one scale per row, ``Cast`` for
float16); all arithmetic stays float32. Candidates are tried smallest first
(``checkpoints.ENCODINGS``): int8 everywhere, int8 with a float16 output layer, float16
everywhere. The PyTorch model is first given exactly the stored values, so
"what runs in ONNX" is a PyTorch model we test against (logits within 1e-4).
The first candidate whose greedy preset continuation is unchanged and whose
test perplexity moves by less than 0.5 % ships; if none does, float32 ships.
Every candidate's figures go to the stage's report (``runs/onnx_report.json``),
which the evidence stage copies into ``evidence.json`` (key ``onnx``); the
report in bench/RESULTS.md is printed by ``bench/onnx_sizes.py``.

``models/manifest.json`` lists the shipped models with their registry specs
(name, label, kind, heads, sizes, colour) and the settings the site shares (C,
T, special ids, the preset's seed); ``python -m export manifest`` writes it
again from the shipped files alone.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import numpy as np
import onnx
import torch

from . import atomic
from .artefacts import Artefacts, onnx_rebuild, onnx_report, run_dir
from .checkpoints import (
    DESCRIPTIONS,
    load_compact,
    load_full,
    rounded_model,
    save_compact,
)
from .corpus import Corpus
from .defaults import MIN_TEMPERATURE, PRESET_MAX_NEW, PRESET_SEED
from .digest import file_sha256, sha256_bytes as sha256
from .generate import EXCLUDED_IDS, MAX_NEW_TOKENS, generate_ids, prompt_history
from .models import count_parameters, get_spec, shipped_models
from .onnx_weights import OPSET, quantize_initializers
from .preset import preset_of, story_examples
from .teaching_graph import (
    ATTENTION_MODELS,
    check_fresh,
    write_all as write_teaching_graphs,
)
from .windows import context_window
from .wordlm import SPECIAL_IDS

MANIFEST_SCHEMA = "mha-manifest/2"
MAX_PPL_CHANGE = 0.005
PARITY_TOL = 1e-4


class _Exportable(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.attention = getattr(model, "heads", 0) > 0

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
    torch.onnx.export(
        wrapper,
        args,
        buf,
        input_names=inputs,
        output_names=outputs,
        dynamic_axes={"ids": {0: "batch"}, **{o: {0: "batch"} for o in outputs}},
        opset_version=OPSET,
        dynamo=False,
    )
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto)
    return proto


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
        mask = (
            np.ones(shapes["head_mask"][0], dtype=np.float32)
            if head_mask is None
            else head_mask
        )
        out["head_mask"] = np.asarray(mask, dtype=np.float32)
    elif head_mask is not None:
        raise ValueError("this model has no head_mask input (the MLP has no heads)")
    return out


def ort_logits(sess, x: np.ndarray, batch: int = 1024, head_mask=None) -> np.ndarray:
    return np.concatenate(
        [
            sess.run(["logits"], feeds(sess, x[i : i + batch], head_mask))[0]
            for i in range(0, len(x), batch)
        ]
    )


def ort_perplexity(sess, windows) -> float:
    x, y = windows.all()
    x, y = x.numpy(), y.numpy()
    total = 0.0
    for i in range(0, len(x), 2048):
        logits = ort_logits(sess, x[i : i + 2048]).astype(np.float64)
        m = logits.max(axis=1, keepdims=True)
        logz = (m + np.log(np.exp(logits - m).sum(axis=1, keepdims=True)))[:, 0]
        total += float((logz - logits[np.arange(len(logits)), y[i : i + 2048]]).sum())
    return math.exp(total / len(y))


@torch.no_grad()
def torch_perplexity(model, windows) -> float:
    from .train import mean_loss

    return math.exp(mean_loss(model, windows))


def ort_predictor(sess, head_mask=None):
    return lambda window: sess.run(["logits"], feeds(sess, window, head_mask))[0][0]


# smallest first; float32 is the last resort
CANDIDATES = ("int8", "int8 + float16 output layer", "float16")


def parity_prompts(corpus: Corpus) -> list[str]:
    _, preset = preset_of(corpus)
    long_story = story_examples(corpus)["long"][0]["text"]
    return [
        preset,
        "The little robot wanted to fly to the moon, so it",
        " ".join(long_story.split()[:120]),
    ]


def parity_batch(corpus: Corpus) -> np.ndarray:
    """The 64 test windows every PyTorch/onnxruntime comparison uses (the same ones on every run)."""
    test = corpus.windows["test"]
    x, _ = test.batch(
        torch.randperm(len(test), generator=torch.Generator().manual_seed(PRESET_SEED))[
            :64
        ]
    )
    return x.numpy()


def parity_document(corpus: Corpus) -> dict:
    """``parity.json`` before any model ran: the prompts and their windows; ``record_parity`` adds logits."""
    itos, T = corpus.vocab.itos, corpus.T
    return {
        "prompts": [
            {
                "text": p,
                "window": context_window(prompt_history(itos, p), T),
                "logits": {},
            }
            for p in parity_prompts(corpus)
        ]
    }


def record_parity(parity: dict, name: str, sess) -> None:
    """The shipped model's logits for each parity prompt, which the browser must reproduce."""
    for p in parity["prompts"]:
        p["logits"][name] = [
            float(v)
            for v in ort_predictor(sess)(np.asarray([p["window"]], dtype=np.int64))
        ]


def _checkpoint_for(runs: Path, name: str, corpus: Corpus) -> Path:
    folder = run_dir(runs, name, PRESET_SEED)
    ckpt = folder / "best.pt"
    if not ckpt.is_file():
        raise FileNotFoundError(f"{ckpt} not found: train seed {PRESET_SEED} first")
    result = folder / "result.json"
    if (
        result.is_file()
        and json.loads(result.read_text()).get("key", {}).get("corpus") != corpus.key()
    ):
        raise ValueError(
            f"{folder} was trained on other stories or another vocabulary than these; "
            "give the same --data, --stories, --vocab-size and --context as for training"
        )
    return ckpt


def export_all(
    corpus: Corpus,
    runs: Path,
    out: Path,
    models: tuple[str, ...] | None = None,
    log=print,
) -> dict:
    """Export, compare encodings, check parity; write models, compact checkpoints, parity vectors, the manifest
    and the report (``runs/onnx_report.json``) that the evidence stage puts in evidence.json."""
    itos, T = corpus.vocab.itos, corpus.T
    test = corpus.windows["test"]
    # sweep models are trained, not shipped
    models = models or tuple(s.name for s in shipped_models())
    checkpoints = {name: _checkpoint_for(runs, name, corpus) for name in models}
    parity_x, parity = parity_batch(corpus), parity_document(corpus)
    preset_history = prompt_history(itos, parity["prompts"][0]["text"])
    report = {}
    for name, ckpt in checkpoints.items():
        model = load_full(ckpt)
        float_proto = to_onnx(model)
        float_bytes = float_proto.SerializeToString()
        f_sess = session(float_bytes)
        ppl_torch = torch_perplexity(model, test)
        ppl_float = ort_perplexity(f_sess, test)
        greedy_torch, _ = generate_ids(model, preset_history, PRESET_MAX_NEW)
        with torch.no_grad():
            ref_float = model(torch.from_numpy(parity_x))
            ref_float = (
                ref_float[0] if isinstance(ref_float, tuple) else ref_float
            ).numpy()
        float_diff = float(np.abs(ort_logits(f_sess, parity_x) - ref_float).max())
        greedy_float_ort, _ = generate_ids(
            ort_predictor(f_sess), preset_history, PRESET_MAX_NEW, T=T
        )
        if greedy_float_ort != greedy_torch:
            raise AssertionError(
                f"{name}: greedy continuation differs between PyTorch and onnxruntime"
            )
        if float_diff > PARITY_TOL:
            raise AssertionError(
                f"{name}: onnxruntime logits differ from PyTorch by {float_diff:.2e}"
            )
        tried, chosen = {}, None
        for label in CANDIDATES:
            small = rounded_model(model, label)
            enc_bytes = quantize_initializers(
                to_onnx(small), small, label
            ).SerializeToString()
            enc_sess = session(enc_bytes)
            with torch.no_grad():
                ref = small(torch.from_numpy(parity_x))
                ref = (ref[0] if isinstance(ref, tuple) else ref).numpy()
            diff = float(np.abs(ort_logits(enc_sess, parity_x) - ref).max())
            if diff > PARITY_TOL:
                raise AssertionError(
                    f"{name} ({label}): onnxruntime differs from the rounded PyTorch model by {diff:.2e}"
                )
            ppl = ort_perplexity(enc_sess, test)
            greedy, _ = generate_ids(
                ort_predictor(enc_sess), preset_history, PRESET_MAX_NEW, T=T
            )
            ok = greedy == greedy_torch and abs(ppl / ppl_torch - 1) < MAX_PPL_CHANGE
            tried[label] = {
                "bytes": len(enc_bytes),
                "test_perplexity": ppl,
                "perplexity_change": ppl / ppl_torch - 1,
                "greedy_unchanged": greedy == greedy_torch,
                "max_abs_logit_diff": diff,
                "accepted": ok,
            }
            log(
                f"{name} {label}: {len(enc_bytes) / 1e6:.2f} MB, perplexity {ppl_torch:.3f} -> {ppl:.3f} "
                f"({100 * (ppl / ppl_torch - 1):+.3f} %), greedy unchanged {greedy == greedy_torch}"
            )
            if ok:
                chosen = (label, small, enc_bytes, enc_sess, ppl)
                break
        if chosen is None:
            chosen = ("float32", model, float_bytes, f_sess, ppl_float)
        label, shipped_model, shipped, sess, ppl_shipped = chosen
        mask_diff = mask_parity(shipped_model, sess, parity_x)
        if mask_diff > PARITY_TOL:
            raise AssertionError(
                f"{name}: with some head mask onnxruntime differs from PyTorch by {mask_diff:.2e}"
            )
        atomic.write_bytes(Artefacts(out).model_onnx(name), shipped)
        save_compact(
            Artefacts(out).checkpoint(name),
            model.spec,
            shipped_model,
            label,
            corpus.vocab.fingerprint(),
        )
        record_parity(parity, name, sess)
        report[name] = {
            "file": f"models/{name}.onnx",
            "encoding": DESCRIPTIONS[label],
            "bytes": len(shipped),
            "float32_bytes": len(float_bytes),
            "test_perplexity_torch": ppl_torch,
            "test_perplexity_onnx_float32": ppl_float,
            "test_perplexity_shipped": ppl_shipped,
            "max_abs_logit_diff_float32": float_diff,
            "tried": tried,
            "opset": OPSET,
        }
        log(
            f"{name}: shipping {report[name]['encoding']} ({len(shipped) / 1e6:.2f} MB)"
        )
    atomic.write_json(Artefacts(out).parity, parity, indent=None)
    _write_teaching_graphs(out, log)
    write_manifest(out, models)
    full = {
        "models": report,
        "checkpoints": {name: file_sha256(ckpt) for name, ckpt in checkpoints.items()},
    }
    atomic.write_json(onnx_report(runs), full)
    return full


def manifest_entry(out: Path, name: str, C: int, T: int) -> dict:
    """What the site needs to know about one shipped model, read from its ONNX file and compact checkpoint."""
    ckpt = Artefacts(out).checkpoint(name)
    model = load_compact(ckpt)
    spec = model.spec
    # how the site presents it (label, colours) is the registry's, now
    shown = get_spec(name)
    if spec.name != name:
        raise ValueError(f"{ckpt} holds the model {spec.name!r}, not {name!r}")
    if (model.C, model.T) != (C, T):
        raise ValueError(
            f"{ckpt} was made for C = {model.C}, T = {model.T}, but vocab.json has C = {C}, T = {T}"
        )
    data = Artefacts(out).model_onnx(name).read_bytes()
    proto = onnx.load_from_string(data)
    return {
        "name": name,
        "label": shown.label,
        "file": f"models/{name}.onnx",
        "bytes": len(data),
        "sha256": sha256(data),
        "heads": spec.heads,
        "parameters": count_parameters(model),
        "inputs": [i.name for i in proto.graph.input],
        "outputs": [o.name for o in proto.graph.output],
        "encoding": DESCRIPTIONS[model.encoding],
        "kind": spec.kind,
        "d_model": spec.d_model,
        "hidden": spec.hidden,
        "head_dim": spec.head_dim,
        "colour": shown.colour,
        "colour_dark": shown.colour_dark,
        **_steps_entry(out, name),
    }


def _steps_entry(out: Path, name: str) -> dict:
    """Page 4's teaching graph of ``name`` (export/teaching_graph.py), when there is one: {"steps": {...}}."""
    artefacts = Artefacts(out)
    path = artefacts.teaching_onnx(name)
    if not path.is_file():
        return {}
    check_fresh(artefacts, name)
    data = path.read_bytes()
    graph = onnx.load_from_string(data).graph
    # the name the graph gives its external weights file: the browser maps it to the shipped file's bytes
    locations = {
        e.value
        for i in graph.initializer
        for e in i.external_data
        if e.key == "location"
    }
    return {
        "steps": {
            "file": f"models/{path.name}",
            "bytes": len(data),
            "sha256": sha256(data),
            "weights": f"models/{name}.onnx",
            "external_path": ",".join(sorted(locations)),
            "outputs": [o.name for o in graph.output],
        }
    }


def write_manifest(out: Path, models: tuple[str, ...] | None = None) -> Path:
    """``models/manifest.json``: the shipped models with their registry specs, and the settings the site shares."""
    vocab = json.loads(Artefacts(out).vocab.read_text())
    C, T = vocab["C"], vocab["T"]
    models = models or tuple(s.name for s in shipped_models())
    entries = [manifest_entry(out, name, C, T) for name in models]
    return atomic.write_json(
        Artefacts(out).manifest,
        {
            "schema": MANIFEST_SCHEMA,
            "models": entries,
            "C": C,
            "T": T,
            "opset": OPSET,
            "special": dict(SPECIAL_IDS),
            "preset": {
                "seed": PRESET_SEED,
                "max_new_tokens": PRESET_MAX_NEW,
                "decoding": "greedy",
            },
            "generation": {
                "max_new_tokens": MAX_NEW_TOKENS,
                "excluded_ids": sorted(EXCLUDED_IDS),
                "min_temperature": MIN_TEMPERATURE,
            },
        },
        indent=1,
    )


def _write_teaching_graphs(out: Path, log=print) -> None:
    """The teaching graphs point into the shipped files' bytes, so they are written again with them."""
    if all(Artefacts(out).model_onnx(name).is_file() for name in ATTENTION_MODELS):
        write_teaching_graphs(out, log=log)


def all_head_masks(heads: int) -> list[list[float]]:
    """Every 0/1 mask of ``heads`` heads (16 for four heads), all ones first."""
    return [
        [float((k >> (heads - 1 - h)) & 1) for h in range(heads)]
        for k in range(2**heads - 1, -1, -1)
    ]


def mask_parity(model, sess, x: np.ndarray) -> float:
    """Largest |logit difference| between PyTorch and onnxruntime over every head mask (0 for the MLP)."""
    heads = getattr(model, "heads", 0)
    worst = 0.0
    for mask in all_head_masks(heads) if heads else [None]:
        with torch.no_grad():
            ref = (
                model(torch.from_numpy(x))
                if mask is None
                else model(torch.from_numpy(x), head_mask=torch.tensor(mask))
            )
        worst = max(
            worst,
            float(np.abs(ort_logits(sess, x, head_mask=mask) - ref.numpy()).max()),
        )
    return worst


def reexport(
    checkpoints: Path, out: Path, data=None, runs: Path = Path("runs"), log=print
) -> dict:
    """Rebuild the ONNX files from the shipped compact checkpoints, without the training runs.

    The compact checkpoints hold exactly the values the ONNX files store, so
    the weights come out unchanged; what changes is the graph (for example the
    ``head_mask`` input). Before anything is written: PyTorch and onnxruntime
    agree within PARITY_TOL for every head mask, the greedy preset
    continuation equals the saved one, and the test perplexity equals the
    recorded shipped one. Then the models, parity vectors and manifest are
    written, and the new byte sizes go to this stage's own report
    (``runs/onnx_rebuild.json``), which the evidence stage reads when it
    assembles evidence.json next (``evidence.rebuilt_onnx_sizes``).
    """
    from .corpus import corpus_of_evidence
    from .evidence import measurements

    try:
        # the recorded figures the rebuilt files must reproduce
        evidence = measurements(out, runs)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{Artefacts(out).evidence} not found: run `python -m export evidence` first"
        ) from None
    torch.set_num_threads(1)  # as the sessions; the checks do not depend on it
    corpus = corpus_of_evidence(evidence, data)
    itos, T, test = corpus.vocab.itos, corpus.T, corpus.windows["test"]
    parity_x, parity = parity_batch(corpus), parity_document(corpus)
    preset = evidence["preset"]
    preset_history = prompt_history(itos, preset["prompt"])
    files, sizes = {}, {}
    for name in (s.name for s in shipped_models()):
        path = checkpoints / Artefacts(out).checkpoint(name).name
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} not found: restore wasm_assets/checkpoints/ or run `python -m export onnx`"
            )
        model = load_compact(path)
        proto = (
            to_onnx(model)
            if model.encoding == "float32"
            else quantize_initializers(to_onnx(model), model, model.encoding)
        )
        data_bytes = proto.SerializeToString()
        sess = session(data_bytes)
        diff = mask_parity(model, sess, parity_x)
        if diff > PARITY_TOL:
            raise AssertionError(
                f"{name}: onnxruntime differs from PyTorch by {diff:.2e} (tolerance {PARITY_TOL})"
            )
        ids, ended = generate_ids(
            ort_predictor(sess), preset_history, preset["max_new_tokens"], T=T
        )
        saved = preset["continuations"][name]
        if ids != saved["ids"] or ended != saved["ended_with_eos"]:
            raise AssertionError(
                f"{name}: the greedy preset continuation changed; nothing was written"
            )
        report = evidence["onnx"][name]
        ppl = ort_perplexity(sess, test)
        if not math.isclose(ppl, report["test_perplexity_shipped"], rel_tol=1e-5):
            raise AssertionError(
                f"{name}: test perplexity {ppl:.6f} differs from the recorded "
                f"{report['test_perplexity_shipped']:.6f}; nothing was written"
            )
        record_parity(parity, name, sess)
        tried = {}
        for label in report.get("tried", {}):
            small = rounded_model(model, label)
            tried[label] = len(
                quantize_initializers(to_onnx(small), small, label).SerializeToString()
            )
        sizes[name] = {
            "bytes": len(data_bytes),
            "sha256": sha256(data_bytes),
            "float32_bytes": len(to_onnx(model).SerializeToString()),
            "tried_bytes": tried,
        }
        files[name] = data_bytes
        heads = getattr(model, "heads", 0)
        log(
            f"{name}: {len(data_bytes) / 1e6:.2f} MB, largest PyTorch/onnxruntime difference over "
            f"{2**heads if heads else 1} head mask(s) {diff:.1e}, preset continuation unchanged"
        )
    for name, data_bytes in files.items():
        atomic.write_bytes(Artefacts(out).model_onnx(name), data_bytes)
    atomic.write_json(Artefacts(out).parity, parity, indent=None)
    _write_teaching_graphs(out, log)
    write_manifest(out)
    report = atomic.write_json(onnx_rebuild(runs), {"models": sizes})
    log(
        f"wrote {report}; now `python -m export evidence` takes the new sizes, then `pagedata`"
    )
    return {"models": sizes}


def command(args, corpus=None) -> dict:
    """``python -m export onnx``: from the seed-11 runs, or ``--from-checkpoints DIR``."""
    from .cli_checks import check_out

    check_out(args)
    if getattr(args, "from_checkpoints", None):
        return reexport(
            Path(args.from_checkpoints),
            Path(args.out),
            data=args.data,
            runs=Path(args.runs),
        )
    if corpus is None:
        from .corpus import corpus_from_options

        corpus = corpus_from_options(args)
    return export_all(corpus, Path(args.runs), Path(args.out))


def stage(ctx) -> None:
    ctx.onnx_report = command(ctx.args, ctx.get_corpus())


def manifest_command(args) -> None:
    """``python -m export manifest``: the manifest again, from the shipped files alone."""
    print(f"wrote {write_manifest(Path(args.out))}")


def steps_command(args) -> None:
    """``python -m export steps``: the teaching graphs again, and the manifest that lists them."""
    write_teaching_graphs(Path(args.out))
    print(f"wrote {write_manifest(Path(args.out))}")
