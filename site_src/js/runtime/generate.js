// The generation loop of export/generate.py, step for step, and the only one
// in the browser (the compare page and its test hook both use Generation):
// crop the history to its last T ids and left-pad with PAD, run the model,
// forbid PAD, BOS and UNK, then take the best score (temperature 0) or draw from
// softmax(logits / temperature) with Mulberry32. EOS ends the story and is not
// added. At most maxNewTokens ids are produced.
//
// The special ids and T are not typed here: they come from the vocabulary
// (vocab.json's "special" and "T"); the token limit and the ids never chosen
// come from the manifest only ("generation": max_new_tokens, excluded_ids,
// whose values export/generate.py sets), so a change there reaches the browser.

import { contextWindow } from "./context.js";
import { Mulberry32 } from "./rng.js";

// BOS plus the prompt's ids (no EOS: the story goes on).
export function promptHistory(vocab, text) {
  return [vocab.special.BOS, ...vocab.encode(text)];
}

export class NonFiniteLogitsError extends Error {
  constructor(where) {
    super(`the model returned non-finite scores${where ? ` (${where})` : ""}`);
    this.name = "NonFiniteLogitsError";
  }
}

// Pick the next id from one row of logits (export.generate.choose_next).
export function chooseNext(logits, temperature, rng, excluded) {
  const n = logits.length;
  for (let i = 0; i < n; i++) if (!Number.isFinite(logits[i])) throw new NonFiniteLogitsError();
  const scores = Float64Array.from(logits);
  for (const id of excluded) if (id < n) scores[id] = -Infinity;
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

// The options of one run, checked: {maxNewTokens, temperature, seed}.
export function checkOptions({ maxNewTokens, temperature = 0, seed = 0 } = {}, limit) {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError("the manifest gives no token limit (generation.max_new_tokens)");
  if (!Number.isInteger(maxNewTokens) || maxNewTokens < 1 || maxNewTokens > limit) {
    throw new RangeError(`the token limit must be a whole number from 1 to ${limit}`);
  }
  if (!Number.isFinite(temperature) || temperature < 0) throw new RangeError("the temperature must be 0 or more");
  if (!Number.isSafeInteger(seed)) throw new RangeError("the seed must be a whole number");
  return { maxNewTokens, temperature, seed };
}

// Softmax probabilities (float64) of one row, with the excluded ids removed,
// as the generator sees them at temperature 1.
export function probabilities(logits, excluded) {
  const n = logits.length;
  const skip = new Set(excluded);
  const p = new Float64Array(n);
  let max = -Infinity;
  for (let i = 0; i < n; i++) if (!skip.has(i) && logits[i] > max) max = logits[i];
  let total = 0;
  for (let i = 0; i < n; i++) {
    p[i] = skip.has(i) ? 0 : Math.exp(logits[i] - max);
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

// One story being continued, one step at a time, so that a page can
// interleave several models and draw between steps.
//
//   const g = new Generation(history, { T, special, limit, excluded, maxNewTokens, temperature, seed });
//   (limit: the most new tokens allowed, excluded: the ids never chosen; both
//   the manifest's "generation")
//   while (!g.done) { const step = await g.step(run); ... }
//
// run(window) resolves to {logits, ...} (a ModelRunner's run). step() returns
// {index, window, output, id, eos, ms}. A step whose run or choice throws
// leaves the generation as it was (the random generator included), so the
// caller may retry it, for example on another backend.
export class Generation {
  constructor(history, { T, special, limit, excluded, ...options }) {
    if (!Number.isInteger(T) || T < 1) throw new RangeError(`the context length T must be a whole number, got ${T}`);
    for (const key of ["PAD", "BOS", "EOS", "UNK"]) {
      if (!Number.isInteger(special?.[key])) throw new RangeError(`the vocabulary gives no ${key} id`);
    }
    if (!Array.isArray(excluded)) throw new RangeError("the manifest gives no excluded ids (generation.excluded_ids)");
    this.options = checkOptions(options, limit);
    this.T = T;
    this.special = special;
    this.excluded = [...excluded];
    this.history = [...history];
    this.ids = [];
    this.endedWithEos = false;
    this.rng = this.options.temperature > 0 ? new Mulberry32(this.options.seed) : null;
  }

  get done() {
    return this.endedWithEos || this.ids.length >= this.options.maxNewTokens;
  }

  async step(run) {
    if (this.done) throw new Error("this generation has ended");
    const window = contextWindow(this.history, this.T, this.special.PAD);
    // The sampler's state before this step's draw: a continuation from this step
    // that starts there makes the same draws as this generation (compare page).
    const rngState = this.rng ? this.rng.state : null;
    const t0 = performance.now();
    const output = await run(window);
    // A copy of the generator, committed only once the choice succeeded.
    const rng = this.rng ? Object.assign(new Mulberry32(0), { state: this.rng.state }) : null;
    const id = chooseNext(output.logits, this.options.temperature, rng, this.excluded);
    const ms = performance.now() - t0;
    this.rng = rng;
    const index = this.ids.length;
    const eos = id === this.special.EOS;
    if (eos) this.endedWithEos = true;
    else {
      this.history.push(id);
      this.ids.push(id);
    }
    return { index, window, output, id, eos, ms, rngState };
  }
}

// A whole continuation with one model: {ids, endedWithEos, steps}.
// onStep(step) is awaited after every step (for drawing or timing).
// options.rngState (optional): start the sampler there (a step's rngState) instead of at the seed.
export async function generateIds(run, history, { rngState = null, ...options }, onStep = null) {
  const generation = new Generation(history, options);
  if (generation.rng && Number.isInteger(rngState)) generation.rng.state = rngState >>> 0;
  const steps = [];
  while (!generation.done) {
    const step = await generation.step(run);
    steps.push(step);
    if (onStep) await onStep(step);
  }
  return { ids: [...generation.ids], endedWithEos: generation.endedWithEos, steps };
}
