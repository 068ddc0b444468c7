// What the compare page takes from the model manifest once
// runtime/manifest_check.js has found it agrees with the vocabulary: the
// pipeline decides every limit here, so the page types none of its own.

import { contextLength } from "../runtime/context.js";

// {T, limit, minTemperature, excluded, preset, models}: models in column order, each with a label and its head count.
export function readSettings(manifest, vocab) {
  const generation = manifest.generation; // its limit and excluded ids are checked by manifestMismatch
  return {
    T: contextLength(manifest, vocab),
    limit: generation.max_new_tokens,
    // The smallest temperature above 0 (export/defaults.py): below it every model would emit padding.
    minTemperature:
      Number.isFinite(generation.min_temperature) && generation.min_temperature > 0
        ? generation.min_temperature
        : Number.MIN_VALUE,
    excluded: generation.excluded_ids,
    preset: manifest.preset || {},
    models: manifest.models
      .filter((m) => m && m.name && m.file)
      .map((m) => ({ ...m, label: m.label || m.name, heads: m.heads ?? 0 })),
  };
}
