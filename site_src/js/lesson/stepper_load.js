// What the stepper (page 4) downloads when the learner opens it, and what it says when a
// download fails. Each function loads afresh: stepper.js keeps what came in, once per page.
//   * the vocabulary, the manifest and the code sections (stepper_code.json, written at build
//     time by site_src/hooks/stepper_code.py);
//   * onnxruntime (runtime/ort.js) and the model's teaching graph (models/<name>.steps.onnx,
//     export/teaching_graph.py): forward_full with every intermediate tensor as an output. It
//     stores no weights of its own: they are read, as ONNX external data, from the shipped model
//     file's bytes, which are downloaded once (runtime/assets.js caches them) and also serve the
//     compare page.

import { AssetError, describeFile, loadBytes, loadJSON } from "../runtime/assets.js";
import { contextLength } from "../runtime/context.js";
import { checkManifest } from "../runtime/manifest_check.js";
import { loadOrt, serial } from "../runtime/ort.js";
import { Vocabulary } from "../runtime/tokenizer.js";
import { errorText } from "../runtime/widget.js";

const CODE_FILE = "js/lesson/stepper_code.json";

// {vocab, T, models (those with a teaching graph), code (sections by name), excluded}.
export async function loadBasics() {
  const [vocab, manifest, code] = await Promise.all([
    loadJSON("wasm_assets/vocab.json"),
    loadJSON("wasm_assets/models/manifest.json"),
    loadJSON(CODE_FILE),
  ]);
  checkManifest(manifest, vocab);
  const models = manifest.models.filter((m) => m.steps && m.heads > 0);
  if (!models.length)
    throw new AssetError(
      `${describeFile("wasm_assets/models/manifest.json")} lists no teaching graph (run \`python -m export steps\`)`,
      { kind: "corrupt" },
    );
  // checkManifest has refused a manifest without the ids generation never picks.
  const excluded = manifest.generation.excluded_ids;
  return {
    vocab: new Vocabulary(vocab),
    T: contextLength(manifest, vocab),
    models,
    code: code.sections || {},
    excluded,
  };
}

// {ort, session, ms}: ms is how long creating the session took, after the downloads.
export async function createSession(model, onProgress) {
  const [ort, weights, graph] = await Promise.all([
    loadOrt("wasm"),
    loadBytes(`wasm_assets/${model.file}`, { bytes: model.bytes, sha256: model.sha256, onProgress }),
    loadBytes(`wasm_assets/${model.steps.file}`, { bytes: model.steps.bytes, sha256: model.steps.sha256 }),
  ]);
  const t0 = performance.now();
  const session = await serial(() =>
    ort.InferenceSession.create(graph.slice(), {
      executionProviders: ["wasm"],
      graphOptimizationLevel: "all",
      logSeverityLevel: 3,
      // The teaching graph names the shipped file as the home of its weights;
      // the same downloaded bytes are handed over, whatever URL they came from.
      externalData: [{ path: model.steps.external_path, data: weights }],
      extra: { session: { disable_quant_qdq: "1" } },
    }),
  );
  return { ort, session, ms: performance.now() - t0 };
}

// What the learner can act on when a file fails: said once, in words.
export function failureText(err) {
  if (err instanceof AssetError) {
    // The loaders' own advice where they give one (offline, a new build, a damaged download).
    const advice = err.advice
      ? String(err.advice).replace(/\.?$/, ".")
      : "Reload the page, and if it keeps failing, tell the site's maintainer.";
    return `${String(err.message).replace(/\.$/, "")}. ${advice} The rest of the page works without it.`;
  }
  return `The stepper could not run the model (${errorText(err)}). The rest of the page works without it; reload the page to try again.`;
}
