// Whether the model manifest and the vocabulary were written for the same
// models. Each file's own shape is checked as it loads (assets.js); a pair from
// different builds would still load and run, and every model would then read
// and write the wrong words, so a widget refuses it in words instead.

import { AssetError } from "./assets.js";
import { contextProblem } from "./context.js";

export const MISMATCH_TITLE = "The site's model files do not belong together";
export const MISMATCH_ADVICE =
  "If you built this site yourself, run `make models` and build again; otherwise reload the page later.";

// For a widget whose failures are AssetErrors: throws one naming the mismatch, with the advice.
export function checkManifest(manifest, vocab) {
  const mismatch = manifestMismatch(manifest, vocab);
  if (mismatch) throw new AssetError(`${MISMATCH_TITLE}: ${mismatch}`, { kind: "corrupt", advice: MISMATCH_ADVICE });
}

// What is wrong, in a few words, or null. vocab: a Vocabulary (tokenizer.js) or vocab.json itself.
export function manifestMismatch(manifest, vocab) {
  if (!manifest || !Array.isArray(manifest.models) || !manifest.models.length) {
    return "wasm_assets/models/manifest.json lists no models";
  }
  const context = contextProblem(manifest, vocab);
  if (context) return context;
  for (const key of ["PAD", "BOS", "EOS", "UNK"]) {
    if (!Number.isInteger(vocab.special?.[key])) return `vocab.json gives no ${key} id`;
    if (manifest.special && manifest.special[key] !== vocab.special[key]) {
      return `the manifest and vocab.json disagree about the ${key} id`;
    }
  }
  const g = manifest.generation;
  if (
    !g ||
    !Number.isInteger(g.max_new_tokens) ||
    g.max_new_tokens < 1 ||
    !Array.isArray(g.excluded_ids) ||
    !g.excluded_ids.every(Number.isInteger)
  ) {
    return "the manifest gives no generation limits (generation.max_new_tokens and excluded_ids)";
  }
  if (manifest.C !== undefined && manifest.C !== vocab.itos.length) {
    return `the manifest says the vocabulary has ${manifest.C} tokens, vocab.json has ${vocab.itos.length}`;
  }
  return null;
}
