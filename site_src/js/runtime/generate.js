// The generation loop of export/generate.py, step for step:
// crop the history to its last T ids and left-pad with PAD, run the model,
// forbid PAD, BOS and UNK, then take the best score (temperature 0) or draw from
// softmax(logits / temperature) with Mulberry32. EOS ends the story and is not
// added. At most maxNewTokens (1..64) ids are produced.

import { Mulberry32 } from "./rng.js";

export const PAD_ID = 0;
export const BOS_ID = 1;
export const EOS_ID = 2;
export const UNK_ID = 3;
export const EXCLUDED_IDS = [PAD_ID, BOS_ID, UNK_ID];
export const MAX_NEW_TOKENS = 64;
export const DEFAULT_NEW_TOKENS = 24;

// The last T ids of history, left-padded with PAD (export.windows.context_window).
export function contextWindow(history, T) {
  const visible = history.slice(Math.max(0, history.length - T));
  return [...new Array(T - visible.length).fill(PAD_ID), ...visible];
}

// BOS plus the prompt's ids (no EOS: the story goes on).
export function promptHistory(vocab, text) {
  return [BOS_ID, ...vocab.encode(text)];
}

export class NonFiniteLogitsError extends Error {
  constructor(where) {
    super(`the model returned non-finite scores${where ? ` (${where})` : ""}`);
    this.name = "NonFiniteLogitsError";
  }
}

// Pick the next id from one row of logits (export.generate.choose_next).
export function chooseNext(logits, temperature = 0, rng = null) {
  const n = logits.length;
  for (let i = 0; i < n; i++) if (!Number.isFinite(logits[i])) throw new NonFiniteLogitsError();
  const scores = Float64Array.from(logits);
  for (const id of EXCLUDED_IDS) if (id < n) scores[id] = -Infinity;
  if (!(temperature > 0)) {
    let best = 0;
    for (let i = 1; i < n; i++) if (scores[i] > scores[best]) best = i; // first maximum, like argmax
    return best;
  }
  if (!rng) throw new Error("sampling needs a seeded generator");
  let max = -Infinity;
  const z = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    z[i] = scores[i] / temperature;
    if (z[i] > max) max = z[i];
  }
  const cumulative = new Float64Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    total += Math.exp(z[i] - max);
    cumulative[i] = total;
  }
  const u = rng.random() * cumulative[n - 1];
  // searchsorted(side="right"): the first index whose cumulative sum exceeds u
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cumulative[mid] <= u) lo = mid + 1;
    else hi = mid;
  }
  return Math.min(lo, n - 1);
}

export function checkOptions({ maxNewTokens = DEFAULT_NEW_TOKENS, temperature = 0, seed = 0 } = {}) {
  if (!Number.isInteger(maxNewTokens) || maxNewTokens < 1 || maxNewTokens > MAX_NEW_TOKENS) {
    throw new RangeError(`the token limit must be a whole number from 1 to ${MAX_NEW_TOKENS}`);
  }
  if (!Number.isFinite(temperature) || temperature < 0) throw new RangeError("the temperature must be 0 or more");
  if (!Number.isSafeInteger(seed)) throw new RangeError("the seed must be a whole number");
  return { maxNewTokens, temperature, seed };
}

// Softmax probabilities (float64) of one row, with the excluded ids removed,
// as the generator sees them at temperature 1.
export function probabilities(logits) {
  const n = logits.length;
  const p = new Float64Array(n);
  let max = -Infinity;
  for (let i = 0; i < n; i++) if (!EXCLUDED_IDS.includes(i) && logits[i] > max) max = logits[i];
  let total = 0;
  for (let i = 0; i < n; i++) {
    p[i] = EXCLUDED_IDS.includes(i) ? 0 : Math.exp(logits[i] - max);
    total += p[i];
  }
  for (let i = 0; i < n; i++) p[i] /= total;
  return p;
}

export function topK(values, k = 5) {
  const idx = [];
  for (let i = 0; i < values.length; i++) {
    if (idx.length < k || values[i] > values[idx[idx.length - 1]]) {
      idx.push(i);
      idx.sort((a, b) => values[b] - values[a] || a - b);
      if (idx.length > k) idx.pop();
    }
  }
  return idx;
}

// Generate after `history`. `step(window)` runs one model and resolves to
// {logits: Float32Array, ...}. Calls onStep({id, index, window, output, ms})
// after each accepted token. Resolves to {ids, endedWithEos}.
export async function generateIds(step, history, options = {}, onStep = null) {
  const { maxNewTokens, temperature, seed } = checkOptions(options);
  const T = options.T ?? 64;
  const rng = temperature > 0 ? new Mulberry32(seed) : null;
  const hist = [...history];
  const ids = [];
  for (let index = 0; index < maxNewTokens; index++) {
    const window = contextWindow(hist, T);
    const t0 = performance.now();
    const output = await step(window);
    const id = chooseNext(output.logits, temperature, rng);
    const ms = performance.now() - t0;
    if (onStep) await onStep({ id, index, window, output, ms, eos: id === EOS_ID });
    if (id === EOS_ID) return { ids, endedWithEos: true };
    hist.push(id);
    ids.push(id);
  }
  return { ids, endedWithEos: false };
}
