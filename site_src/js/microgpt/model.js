// microgpt's trained model on plain JavaScript numbers.
//
// A port of export/microgpt/floats.py (step, forward_attention, sample_names).
// Every sum runs left to right from 0, and divisions are written as
// multiplications by x ** -1 exactly where the Python code does it, so the numbers equal Python's (up to the last bit of exp/pow,
// which two maths libraries may round differently).

export const NAME_RULE = /^[a-z]{1,15}$/;

// Why a name cannot be fed to the model, or "" when it can.
export function nameProblem(name, uchars, blockSize = 16) {
  if (typeof name !== "string" || name.length === 0) return "Type a name: at least one letter.";
  if (name.length > blockSize - 1) {
    return `That is ${name.length} characters; the model sees 16 positions (one start marker + 15 letters), so use at most ${blockSize - 1}.`;
  }
  if (!NAME_RULE.test(name)) {
    const bad = [...new Set([...name].filter((c) => !/[a-z]/.test(c)))].join(" ");
    return `Only the letters a–z, please (the model was trained on names written with them). Not allowed here: ${bad}`;
  }
  const unknown = [...name].filter((c) => !uchars.includes(c));
  if (unknown.length) return `The model never saw these letters: ${[...new Set(unknown)].join(" ")}`;
  return "";
}

function total(terms) {
  let acc = 0.0;
  for (let i = 0; i < terms.length; i++) acc += terms[i];
  return acc;
}

function linear(vec, mat) {
  const out = new Array(mat.length);
  for (let i = 0; i < mat.length; i++) {
    const row = mat[i];
    const n = Math.min(row.length, vec.length);
    let acc = 0.0;
    for (let j = 0; j < n; j++) acc += row[j] * vec[j];
    out[i] = acc;
  }
  return out;
}

export function softmax(scores) {
  let top = -Infinity;
  for (const s of scores) if (s > top) top = s;
  const ups = scores.map((s) => Math.exp(s - top));
  const inv = Math.pow(total(ups), -1);
  return ups.map((u) => u * inv);
}

function rmsnorm(vec) {
  let acc = 0.0;
  for (const v of vec) acc += v * v;
  const meanSq = acc * Math.pow(vec.length, -1);
  const factor = Math.pow(meanSq + 1e-5, -0.5);
  return vec.map((v) => v * factor);
}

function nLayer(weights) {
  return Object.keys(weights).filter((k) => k.endsWith(".attn_wq")).length;
}

// The probe: one head over all the numbers, on weights trained for several heads.
function probeOneHead(q, keys, values) {
  const wideScale = Math.pow(q.length, -0.5);
  const wide = keys.map((key) => {
    let acc = 0.0;
    for (let d = 0; d < q.length; d++) acc += q[d] * key[d];
    return acc * wideScale;
  });
  const weights = softmax(wide);
  const out = [];
  for (let d = 0; d < q.length; d++) {
    let acc = 0.0;
    for (let t = 0; t < values.length; t++) acc += weights[t] * values[t][d];
    out.push(acc);
  }
  return { out, weights };
}

// One position through the model; fills `trace` with layer 0's attention details.
// `headMask` (one boolean per head; false knocks the head out: 0s in place of
// its numbers before attn_wo) and `probe` (one head over all numbers instead
// of the heads) are step()'s head_mask and probe in export/microgpt/floats.py.
function floatStep(weights, token, pos, keyCache, valueCache, nHead, trace, { headMask = null, probe = false } = {}) {
  let x = weights.wte[token].map((t, i) => t + weights.wpe[pos][i]);
  x = rmsnorm(x);
  for (let layer = 0; layer < keyCache.length; layer++) {
    const pre = `layer${layer}.`;
    const skip = x;
    x = rmsnorm(x);
    const q = linear(x, weights[pre + "attn_wq"]);
    keyCache[layer].push(linear(x, weights[pre + "attn_wk"]));
    valueCache[layer].push(linear(x, weights[pre + "attn_wv"]));
    const keys = keyCache[layer];
    const values = valueCache[layer];
    const headDim = Math.floor(q.length / nHead);
    const scale = Math.pow(Math.pow(headDim, 0.5), -1);
    const headsOut = [];
    const headWeights = [];
    for (let head = 0; head < nHead; head++) {
      const lo = head * headDim;
      const scores = keys.map((key) => {
        let acc = 0.0;
        for (let d = 0; d < headDim; d++) acc += q[lo + d] * key[lo + d];
        return acc * scale;
      });
      const attn = softmax(scores);
      headWeights.push(attn);
      for (let d = 0; d < headDim; d++) {
        let acc = 0.0;
        for (let t = 0; t < values.length; t++) acc += attn[t] * values[t][lo + d];
        headsOut.push(acc);
      }
    }
    const probed = probe || trace ? probeOneHead(q, keys, values) : null;
    let glued = headsOut;
    if (probe) glued = probed.out;
    else if (headMask) glued = headsOut.map((v, i) => (headMask[Math.floor(i / headDim)] ? v : 0.0));
    const mixed = linear(glued, weights[pre + "attn_wo"]);
    if (trace && layer === 0) {
      Object.assign(trace, {
        x,
        q,
        k: keys[keys.length - 1],
        v: values[values.length - 1],
        head_weights: headWeights,
        single_head_weights: probed.weights,
        heads_out: headsOut,
        attn_out: mixed,
      });
    }
    x = mixed.map((a, i) => a + skip[i]);
    const skip2 = x;
    x = rmsnorm(x);
    x = linear(x, weights[pre + "mlp_fc1"]).map((h) => (h > 0 ? h : 0));
    x = linear(x, weights[pre + "mlp_fc2"]);
    x = x.map((a, i) => a + skip2[i]);
  }
  return linear(x, weights.lm_head);
}

// The same dictionary of lists as forward_attention in export/microgpt/floats.py;
// options {headMask, probe} change attn_out and probs as its head_mask and probe do.
export function forwardAttention(model, name, nHead = model.config.n_head, options = {}) {
  const { weights, uchars } = model;
  const problem = nameProblem(name, uchars, weights.wpe.length);
  if (problem) throw new RangeError(problem);
  if (options.headMask && options.headMask.length !== nHead) {
    throw new RangeError(`headMask needs one entry per head (${nHead}), got ${options.headMask.length}`);
  }
  const bos = uchars.length;
  const tokens = [bos, ...[...name].map((c) => uchars.indexOf(c))];
  const layers = nLayer(weights);
  const keyCache = Array.from({ length: layers }, () => []);
  const valueCache = Array.from({ length: layers }, () => []);
  const fields = ["x", "q", "k", "v", "head_weights", "single_head_weights", "heads_out", "attn_out"];
  const out = Object.fromEntries(fields.map((f) => [f, []]));
  out.probs = [];
  tokens.forEach((tok, pos) => {
    const trace = {};
    const logits = floatStep(weights, tok, pos, keyCache, valueCache, nHead, trace, options);
    for (const f of fields) out[f].push(trace[f]);
    out.probs.push(softmax(logits));
  });
  out.keys = out.k;
  out.values = out.v;
  delete out.k;
  delete out.v;
  out.tokens = tokens;
  out.labels = ["", ...name];
  return out;
}

// Python's random.Random (MT19937), enough of it for random() and choices().
export class PyRandom {
  constructor(seed) {
    if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be an integer, got ${seed}`);
    this.mt = new Uint32Array(624);
    this.index = 624;
    // CPython seeds from the absolute value, cut into 32-bit words (little end first).
    let n = Math.abs(seed);
    const key = [];
    do {
      key.push(n % 4294967296);
      n = Math.floor(n / 4294967296);
    } while (n > 0);
    this.initByArray(key);
  }

  initGenrand(s) {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < 624; i++) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
    this.index = 624;
  }

  initByArray(key) {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(624, key.length); k > 0; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1664525)) + key[j] + j) >>> 0;
      i++;
      j++;
      if (i >= 624) {
        mt[0] = mt[623];
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = 623; k > 0; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1566083941)) - i) >>> 0;
      i++;
      if (i >= 624) {
        mt[0] = mt[623];
        i = 1;
      }
    }
    mt[0] = 0x80000000;
  }

  nextUint32() {
    const mt = this.mt;
    if (this.index >= 624) {
      for (let kk = 0; kk < 624; kk++) {
        const y = (mt[kk] & 0x80000000) | (mt[(kk + 1) % 624] & 0x7fffffff);
        mt[kk] = (mt[(kk + 397) % 624] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0)) >>> 0;
      }
      this.index = 0;
    }
    let y = mt[this.index++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  random() {
    const a = this.nextUint32() >>> 5;
    const b = this.nextUint32() >>> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
  }

  // random.choices(range(len(weights)), weights=weights)[0]
  choiceIndex(weights) {
    const cum = [];
    let acc = 0;
    weights.forEach((w, i) => {
      acc = i === 0 ? w : acc + w;
      cum.push(acc);
    });
    const totalWeight = cum[cum.length - 1] + 0.0;
    const x = this.random() * totalWeight;
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (x < cum[mid]) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

// sample_names(weights, uchars, n, temperature, seed) of export/microgpt.py.
export function sampleNames(model, { n = 20, temperature = 0.5, seed = 42 } = {}) {
  const { weights, uchars } = model;
  const rng = new PyRandom(seed);
  const bos = uchars.length;
  const block = weights.wpe.length;
  const invT = Math.pow(temperature, -1);
  const layers = nLayer(weights);
  const names = [];
  for (let s = 0; s < n; s++) {
    const keyCache = Array.from({ length: layers }, () => []);
    const valueCache = Array.from({ length: layers }, () => []);
    let token = bos;
    let letters = "";
    for (let pos = 0; pos < block; pos++) {
      const logits = floatStep(weights, token, pos, keyCache, valueCache, model.config.n_head, null);
      const probs = softmax(logits.map((l) => l * invT));
      token = rng.choiceIndex(probs);
      if (token === bos) break;
      letters += uchars[token];
    }
    names.push(letters);
  }
  return names;
}

// The next-letter probabilities after every prefix of `name` (index 0: after
// the start marker alone), for a head setting: {headMask, probe}.
export function nextLetterProbs(model, name, options = {}) {
  return forwardAttention(model, name, model.config.n_head, options).probs;
}
