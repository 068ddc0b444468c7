// The "Build it yourself" page's model side: the four-head model's teaching
// graph (models/<model>.steps.onnx, export/teaching_graph.py) on the
// learner's prompt, and from its tensors what each Check hands the learner's
// function (the inputs) and what it compares the answer with (the expected
// numbers, which never reach the Python worker before its numbers are in).
//
// The exercise works on the prompt's own rows: the last n of the graph's 64
// slots (BOS included), where no PAD is; its weights are the shipped ONNX
// file's own, from build_weights.json (export/lesson/build_weights.py).

import { AssetError, describeFile, loadBytes, loadJSON } from "../runtime/assets.js";
import { contextLength, contextWindow } from "../runtime/context.js";
import { checkManifest } from "../runtime/manifest_check.js";
import { promptHistory } from "../runtime/generate.js";
import { loadOrt, serial } from "../runtime/ort.js";
import { Vocabulary, tokenize } from "../runtime/tokenizer.js";

export const MAX_TOKENS = 16; // BOS and up to 15 words: plain Python stays well inside a Check's time
const LAYERS = ["W_Q", "b_Q", "W_K", "b_K", "W_V", "b_V", "W_O", "b_O"];

let basicsPromise = null;
let sessionPromise = null;
let tailPromise = null;

// Vocabulary, the model's manifest entry and the exercise's weights, once per page.
export function basics() {
  if (!basicsPromise) {
    basicsPromise = Promise.all([
      loadJSON("wasm_assets/vocab.json"),
      loadJSON("wasm_assets/models/manifest.json"),
      loadJSON("wasm_assets/build_weights.json"),
    ]).then(([vocab, manifest, weights]) => {
      checkManifest(manifest, vocab);
      // The model is the one the pipeline read the weights from (the registry's most-heads model).
      const name = weights.model;
      const model = manifest.models.find((m) => m.name === name && m.steps);
      if (!model)
        throw new AssetError(
          `${describeFile("wasm_assets/models/manifest.json")} lists no teaching graph for ${name} (run \`python -m export steps\`)`,
          { kind: "corrupt" },
        );
      const missing = LAYERS.filter((k) => !Array.isArray(weights[k]));
      if (typeof name !== "string" || missing.length) {
        throw new AssetError(
          `${describeFile("wasm_assets/build_weights.json")} does not hold ${name}'s attention weights (run \`python -m export build_weights\`)`,
          { kind: "corrupt" },
        );
      }
      // checkManifest has refused a manifest without the ids generation never picks.
      const excluded = manifest.generation.excluded_ids;
      return {
        vocab: new Vocabulary(vocab),
        T: contextLength(manifest, vocab),
        model,
        weights: Object.fromEntries(LAYERS.map((k) => [k, weights[k]])),
        heads: weights.heads,
        tail: weights.tail || null,
        excluded,
      };
    });
    basicsPromise.catch(() => {
      basicsPromise = null;
    });
  }
  return basicsPromise;
}

// The teaching graph's session, its weights read from the shipped model's bytes.
export function session(onProgress = () => {}) {
  if (!sessionPromise) {
    sessionPromise = (async () => {
      const { model } = await basics();
      const [ort, weights, graph] = await Promise.all([
        loadOrt("wasm"),
        loadBytes(`wasm_assets/${model.file}`, { bytes: model.bytes, sha256: model.sha256, onProgress }),
        loadBytes(`wasm_assets/${model.steps.file}`, { bytes: model.steps.bytes, sha256: model.steps.sha256 }),
      ]);
      const created = await serial(() =>
        ort.InferenceSession.create(graph.slice(), {
          executionProviders: ["wasm"],
          graphOptimizationLevel: "all",
          logSeverityLevel: 3,
          externalData: [{ path: model.steps.external_path, data: weights }],
          extra: { session: { disable_quant_qdq: "1" } },
        }),
      );
      return { ort, session: created };
    })();
    sessionPromise.catch(() => {
      sessionPromise = null;
    });
  }
  return sessionPromise;
}

// The rest of the model after attention (models/<model>.tail.onnx, export/lesson/build_weights.py):
// E's final row plus an update row in, the vocabulary's logits out; its weights are the shipped file's.
export function tailSession() {
  if (!tailPromise) {
    tailPromise = (async () => {
      const { model, tail } = await basics();
      if (!tail)
        throw new AssetError(
          `${describeFile("wasm_assets/build_weights.json")} names no tail graph (run \`python -m export build_weights\`)`,
          { kind: "corrupt" },
        );
      const [ort, weights, graph] = await Promise.all([
        loadOrt("wasm"),
        loadBytes(`wasm_assets/${model.file}`, { bytes: model.bytes, sha256: model.sha256 }),
        loadBytes(`wasm_assets/${tail.file}`, { bytes: tail.bytes, sha256: tail.sha256 }),
      ]);
      const created = await serial(() =>
        ort.InferenceSession.create(graph.slice(), {
          executionProviders: ["wasm"],
          graphOptimizationLevel: "all",
          logSeverityLevel: 3,
          externalData: [{ path: tail.external_path, data: weights }],
          extra: { session: { disable_quant_qdq: "1" } },
        }),
      );
      return { ort, session: created };
    })();
    tailPromise.catch(() => {
      tailPromise = null;
    });
  }
  return tailPromise;
}

// The model's logits when the final row's update is `update` (E's final row `e` plus it, through the tail).
export async function logitsAfter(e, update) {
  const { ort, session: s } = await tailSession();
  const row = Float32Array.from(e, (x, i) => x + update[i]);
  const out = await serial(() => s.run({ updated: new ort.Tensor("float32", row, [1, row.length]) }));
  return Array.from(out.logits.data);
}

// What is wrong with a prompt, in words, or "" (in-vocabulary words, at most MAX_TOKENS with BOS).
export function promptProblem(vocab, text) {
  const words = tokenize(String(text));
  if (!words.length) return "Type a few words first.";
  const unknown = words.filter((w) => !vocab.stoi.has(w));
  if (unknown.length)
    return `The model does not know ${unknown.map((w) => `“${w}”`).join(", ")}: use words from its stories.`;
  if (words.length + 1 > MAX_TOKENS)
    return `That is ${words.length} tokens; keep to ${MAX_TOKENS - 1} (with BOS, ${MAX_TOKENS} rows).`;
  return "";
}

// Rows of a [.., rows, cols] block of `data` starting at `offset`, as plain arrays.
function block(data, offset, rows, cols, rowStride = cols, colOffset = 0) {
  const out = [];
  for (let r = 0; r < rows; r++) {
    const at = offset + r * rowStride + colOffset;
    out.push(Array.from(data.subarray(at, at + cols)));
  }
  return out;
}

// The graph on `ids` (BOS first): the last n rows of each tensor the exercise uses.
export async function tensorsFor(ids) {
  const { vocab, T, heads } = await basics();
  const { ort, session: s } = await session();
  const window = contextWindow(ids, T, vocab.special.PAD);
  const feed = BigInt64Array.from(window, (id) => BigInt(id));
  const out = await serial(() => s.run({ ids: new ort.Tensor("int64", feed, [1, T]) }));
  const n = ids.length;
  const d = out.E.dims[2];
  const dh = out.Q.dims[3];
  const rows = (name) => block(out[name].data, (T - n) * d, n, d);
  const perHead = (name, width) =>
    Array.from({ length: heads }, (_, h) => block(out[name].data, (h * T + T - n) * width, n, width));
  const square = (name) =>
    Array.from({ length: heads }, (_, h) => block(out[name].data, (h * T + T - n) * T, n, n, T, T - n));
  const joined = (name) => {
    // [1, heads, T, dh] -> n rows of heads x dh
    const per = perHead(name, dh);
    return per[0].map((_, t) => per.flatMap((head) => head[t]));
  };
  return {
    n,
    T,
    heads,
    d,
    dh,
    ids,
    E: rows("E"),
    Q: perHead("Q", dh),
    K: perHead("K", dh),
    V: perHead("V", dh),
    Qrows: joined("Q"),
    Krows: joined("K"),
    Vrows: joined("V"),
    scores: square("scores"),
    A: square("A"),
    messages: perHead("messages", dh),
    update: rows("update"),
    logits: Array.from(out.logits.data),
  };
}

// The prompt's ids (BOS first) and its tokens as the learner reads them.
export function promptIds(vocab, text) {
  const ids = promptHistory(vocab, text);
  return { ids, tokens: ["BOS", ...tokenize(String(text))] };
}

// One function's Check: {inputs (for the worker), expected (kept here until the numbers are in)}.
export function checkOf(name, g, weights, tokens) {
  const w = weights;
  const H = g.heads;
  const heads = Array.from({ length: H }, (_, h) => h);
  const cases = {
    project: [
      [
        [g.E, w.W_Q, w.b_Q],
        [g.E, w.W_K, w.b_K],
        [g.E, w.W_V, w.b_V],
      ],
      [g.Qrows, g.Krows, g.Vrows],
    ],
    split_heads: [[[g.Qrows, H]], [g.Q]],
    scores: [heads.map((h) => [g.Q[h], g.K[h]]), g.scores],
    causal_softmax: [heads.map((h) => [g.scores[h]]), g.A],
    blend: [heads.map((h) => [g.A[h], g.V[h]]), g.messages],
    multi_head_attention: [[[g.E, w, H]], [g.update]],
  }[name];
  if (!cases) throw new Error(`no check for ${name}`);
  const [calls, expected] = cases;
  return { inputs: { function: name, calls, tokens, n_heads: H }, expected };
}

// The page's verdict: every number within `tolerance` (relative above 1) of the graph's, the same shape.
export function agrees(got, want, tolerance) {
  if (Array.isArray(want)) {
    return Array.isArray(got) && got.length === want.length && want.every((w, i) => agrees(got[i], w, tolerance));
  }
  return (
    typeof got === "number" && Number.isFinite(got) && Math.abs(got - want) <= tolerance * Math.max(1, Math.abs(want))
  );
}
