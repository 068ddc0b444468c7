// The lesson's models in onnxruntime: one session per model and backend. The
// queue (serial) is here because every call into onnxruntime must pass it,
// the engine's start (ort_engine.js) as much as a model's run.

import { NonFiniteLogitsError } from "./generate.js";

// Every session creation and run goes through one queue. The WebGPU build is an
// asyncify WebAssembly instance, which must not be re-entered while a call is
// suspended; on the WebAssembly build the calls are serial anyway.
let queue = Promise.resolve();

export function serial(task) {
  const result = queue.then(task);
  queue = result.catch(() => {});
  return result;
}

// One model on one backend. run(window, headMask?) -> {logits: Float32Array, attention: Float32Array|null}.
// The attention models take a head_mask input (float32 [heads]: 1 keeps a head,
// 0 knocks it out); it is required by the graph, so every run feeds it, ones by default.
export class ModelRunner {
  constructor(ort, session, { name, backend, T, heads = 0 }) {
    if (!Number.isInteger(T) || T < 1) throw new Error(`model ${name}: no context length T was given`);
    this.ort = ort;
    this.session = session;
    this.name = name;
    this.backend = backend;
    this.T = T;
    this.heads = heads;
    this.inputName = session.inputNames.includes("ids") ? "ids" : session.inputNames[0];
    this.hasAttention = session.outputNames.includes("attention");
    this.hasHeadMask = session.inputNames.includes("head_mask");
  }

  static async create(ort, bytes, meta, backend) {
    // logSeverityLevel 3: only errors from the native runtime reach the console.
    // disable_quant_qdq lets constant folding turn the stored int8 weights into
    // float32 once, when the session starts, instead of dequantising them on
    // every token (the arithmetic is the same, so the logits do not change).
    const options = {
      executionProviders: [backend],
      graphOptimizationLevel: "all",
      logSeverityLevel: 3,
      extra: { session: { disable_quant_qdq: "1" } },
    };
    if (backend === "webgpu") options.preferredOutputLocation = "cpu";
    // A copy: the cached download may be used again for another backend.
    let createMs = 0;
    const session = await serial(async () => {
      const t0 = performance.now();
      const created = await ort.InferenceSession.create(bytes.slice(), options);
      createMs = performance.now() - t0; // the time this session took, not the wait for the queue
      return created;
    });
    const runner = new ModelRunner(ort, session, { ...meta, backend });
    runner.createMs = createMs;
    return runner;
  }

  // Runs are queued (see serial), so no two calls into onnxruntime overlap.
  run(window, headMask = null) {
    return serial(() => this._run([window], headMask));
  }

  runBatch(windows, headMask = null) {
    return serial(() => this._run(windows, headMask));
  }

  headMaskTensor(headMask) {
    const mask = headMask ? Float32Array.from(headMask) : new Float32Array(this.heads).fill(1);
    if (mask.length !== this.heads)
      throw new RangeError(`a head mask must have ${this.heads} numbers, got ${mask.length}`);
    return new this.ort.Tensor("float32", mask, [this.heads]);
  }

  async _run(windows, headMask = null) {
    if (!this.session) throw new Error(`${this.name} was closed`);
    const B = windows.length;
    const ids = new BigInt64Array(B * this.T);
    windows.forEach((w, b) => {
      if (w.length !== this.T) throw new RangeError(`a window must have ${this.T} ids, got ${w.length}`);
      for (let i = 0; i < this.T; i++) ids[b * this.T + i] = BigInt(w[i]);
    });
    const input = new this.ort.Tensor("int64", ids, [B, this.T]);
    const feeds = { [this.inputName]: input };
    if (this.hasHeadMask) feeds.head_mask = this.headMaskTensor(headMask);
    else if (headMask) throw new Error(`${this.name} has no heads to switch off`);
    const out = await this.session.run(feeds);
    const logits = await tensorData(out.logits ?? out[this.session.outputNames[0]]);
    for (let i = 0; i < logits.length; i++) {
      if (!Number.isFinite(logits[i])) throw new NonFiniteLogitsError(`${this.name} on ${this.backend}`);
    }
    const attention = this.hasAttention && out.attention ? await tensorData(out.attention) : null;
    for (const tensor of Object.values(out))
      if (tensor && tensor.location !== "cpu" && tensor.dispose) tensor.dispose();
    return { logits, attention };
  }

  async release() {
    const session = this.session;
    this.session = null;
    if (session) {
      try {
        await serial(() => session.release());
      } catch (err) {
        console.warn(`could not release ${this.name}`, err);
      }
    }
  }
}

async function tensorData(tensor) {
  if (tensor.location && tensor.location !== "cpu" && tensor.getData) return new Float32Array(await tensor.getData());
  return tensor.data;
}
