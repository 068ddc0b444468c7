// window.mhaCompare: what the browser tests and benchmarks drive. Everything
// here goes through the same code as the page (the same runners, the same
// Generation loop); nothing is a second implementation.

import { contextWindow } from "../runtime/context.js";
import { generateIds, promptHistory } from "../runtime/generate.js";
import { probeWebGPU } from "../runtime/ort.js";
import { detokenize, tokenize } from "../runtime/tokenizer.js";

export function makeHook(widget) {
  const windowOf = (text) =>
    contextWindow(promptHistory(widget.vocab, String(text)), widget.T, widget.vocab.special.PAD);
  const runner = (name, options = {}) => widget.models.runnerFor(name, options.backend);
  return {
    get ready() {
      return widget.ready;
    },
    get backend() {
      return widget.models ? widget.models.backends() : {};
    },
    get notices() {
      return [...widget.view.notices];
    },
    get errors() {
      return widget.models ? { ...widget.models.errors } : {};
    },
    get lastRun() {
      return widget.lastRun;
    },
    tokenize: (text) => tokenize(String(text)),
    encode: (text) => widget.vocab.encode(String(text)),
    window: (text) => windowOf(text),
    async logits(name, text, options = {}) {
      return (await (await runner(name, options)).run(windowOf(text))).logits;
    },
    // options.headMask: one number per head (1 on, 0 off) for the attention models.
    async logitsForWindow(name, window, options = {}) {
      return (await (await runner(name, options)).run(Array.from(window), options.headMask ?? null)).logits;
    },
    async attentionForWindow(name, window, options = {}) {
      return (await (await runner(name, options)).run(Array.from(window))).attention;
    },
    // Times `runs` single-window runs (B = 1) after `warmup` untimed ones; returns the times in ms.
    async time(name, text, { runs = 200, warmup = 10, backend } = {}) {
      const r = await runner(name, { backend });
      const w = windowOf(text);
      for (let i = 0; i < warmup; i++) await r.run(w);
      const times = [];
      for (let i = 0; i < runs; i++) {
        const t0 = performance.now();
        await r.run(w);
        times.push(performance.now() - t0);
      }
      return times;
    },
    // One model's continuation with runtime/generate.js's loop, off the page.
    // options: {maxNewTokens, temperature, seed, backend}.
    async generate(name, text, options = {}) {
      const r = await runner(name, options);
      const { backend, ...rest } = options;
      const { ids, endedWithEos, steps } = await generateIds(
        (w) => r.run(w),
        promptHistory(widget.vocab, String(text)),
        {
          maxNewTokens: widget.defaultTokens,
          ...rest,
          T: widget.T,
          special: widget.vocab.special,
          limit: widget.limit,
          excluded: widget.excluded,
        },
      );
      const tokens = widget.vocab.decode(ids);
      return {
        ids,
        tokens,
        text: detokenize(tokens),
        ended_with_eos: endedWithEos,
        backend: r.backend,
        times_ms: steps.map((s) => s.ms),
      };
    },
    run: (options = {}) => widget.generate(options),
    select: (name, stepIndex) => widget.inspect(name, stepIndex),
    setBackend: (preference) => {
      widget.view.backendSelect.value = preference;
      return widget.changeBackend(preference);
    },
    probeWebGPU: () => probeWebGPU(),
  };
}
