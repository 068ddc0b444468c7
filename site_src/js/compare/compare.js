// The "Compare their stories" widget: the MLP, one-head and four-head models
// continue the same opening side by side, in this browser.
//
// mount(root) builds the whole UI inside root with DOM calls (user text only
// ever goes through textContent); dispose() stops generation and releases the
// sessions. A test hook is published as window.mhaCompare (see makeHook).

import { AssetError, loadBytes, loadJSON } from "../runtime/assets.js";
import { cellColours } from "../runtime/colormap.js";
import {
  BOS_ID, DEFAULT_NEW_TOKENS, EOS_ID, MAX_NEW_TOKENS, PAD_ID, UNK_ID,
  checkOptions, chooseNext, contextWindow, probabilities, promptHistory, topK,
} from "../runtime/generate.js";
import { Mulberry32 } from "../runtime/rng.js";
import {
  BuildMismatchError, ModelRunner, loadOrt, loadedBuild, probeWebGPU, resolveBackend, supportProblem, threadCount,
} from "../runtime/ort.js";
import { Vocabulary, detokenize, tokenize } from "../runtime/tokenizer.js";

const MODEL_NAMES = ["mlp", "one_head", "four_heads"];
const LABELS = { mlp: "MLP", one_head: "One head", four_heads: "Four heads" };
const BACKEND_LABELS = { wasm: "WebAssembly", webgpu: "WebGPU" };
const PREF_KEY = "mha-compare-backend";
const MAX_PROMPT_CHARS = 100000;
const SHOWN_PROMPT_TOKENS = 40;
const FALLBACK_PROMPT = "Once upon a time, there was a little girl named Lily. She";

let current = null; // the mounted instance (one compare widget per page)

// ---------------------------------------------------------------- DOM helpers

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function panel(kind, title, message, extra = null) {
  return el("div", { class: `mha-panel mha-panel--${kind}`, role: kind === "error" ? "alert" : "status" },
    el("strong", { text: title }), " ", el("span", { text: message }), extra);
}

function formatBytes(n) {
  if (!(n > 0)) return "0 kB";
  return n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${Math.max(1, Math.round(n / 1e3))} kB`;
}

function formatMs(ms) {
  if (!Number.isFinite(ms)) return "–";
  return ms >= 100 ? `${Math.round(ms)} ms` : ms >= 10 ? `${ms.toFixed(1)} ms` : `${ms.toFixed(2)} ms`;
}

function showToken(tok) {
  return tok === "<UNK>" ? "⟨unknown⟩" : tok;
}

const yieldToBrowser = () => new Promise((resolve) => {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => resolve();
  channel.port2.postMessage(null);
});

function readPreference() {
  const fromUrl = new URLSearchParams(location.search).get("backend");
  if (["auto", "wasm", "webgpu"].includes(fromUrl)) return fromUrl;
  try {
    const saved = sessionStorage.getItem(PREF_KEY);
    if (["auto", "wasm", "webgpu"].includes(saved)) return saved;
  } catch { /* storage may be blocked */ }
  return "auto";
}

function savePreference(pref) {
  try {
    sessionStorage.setItem(PREF_KEY, pref);
  } catch { /* ignore */ }
}

// ---------------------------------------------------------------- the widget

class CompareWidget {
  constructor(root) {
    this.root = root;
    this.disposed = false;
    this.runId = 0;
    this.busy = false;
    this.preference = readPreference();
    this.runners = {}; // name -> ModelRunner (the active backend)
    this.extraRunners = new Map(); // "backend:name" -> Promise<ModelRunner> (test hook)
    this.meta = {};
    this.columns = {};
    this.notices = [];
    this.errors = {};
    this.selected = null;
    this.lastRun = null;
    this.timings = {}; // name -> {download_ms, session_ms, warmup_ms}
    this.readyMs = null;
    this.build();
    this.ready = this.start();
  }

  // ------------------------------------------------------------ layout

  build() {
    const id = (s) => `mha-compare-${s}`;
    this.status = el("div", { class: "mha-compare__status", role: "status", "aria-live": "polite" });
    this.progress = el("progress", { class: "mha-compare__progress", max: 100, value: 0, "aria-label": "Download progress" });
    this.statusText = el("span", { text: "Preparing the models…" });
    this.status.append(this.progress, this.statusText);
    this.alerts = el("div", { class: "mha-compare__alerts" });

    this.prompt = el("textarea", { id: id("prompt"), rows: 3, spellcheck: "false", autocomplete: "off" });
    this.prompt.addEventListener("input", () => this.describePrompt());
    this.tokens = el("input", { id: id("tokens"), type: "number", min: 1, max: MAX_NEW_TOKENS, step: 1, value: DEFAULT_NEW_TOKENS, inputmode: "numeric" });
    this.temperature = el("input", { id: id("temperature"), type: "number", min: 0, max: 5, step: 0.1, value: 0, inputmode: "decimal" });
    this.seed = el("input", { id: id("seed"), type: "number", step: 1, value: 11, inputmode: "numeric" });
    this.backendSelect = el("select", { id: id("backend") },
      el("option", { value: "auto", text: "Auto" }),
      el("option", { value: "wasm", text: "WebAssembly (WASM)" }),
      el("option", { value: "webgpu", text: "WebGPU" }));
    this.backendSelect.value = this.preference;
    this.backendSelect.addEventListener("change", () => this.changeBackend(this.backendSelect.value));
    this.generateButton = el("button", { type: "submit", class: "md-button md-button--primary", disabled: true, text: "Generate" });
    this.stopButton = el("button", { type: "button", class: "md-button", disabled: true, text: "Stop", onclick: () => this.stop() });
    this.presetButton = el("button", { type: "button", class: "md-button", text: "Use the held-out preset", onclick: () => this.usePreset() });
    this.promptInfo = el("p", { class: "mha-compare__prompt-info", id: id("prompt-info"), "aria-live": "polite" });
    this.prompt.setAttribute("aria-describedby", id("prompt-info"));
    const field = (label, input, hint) => el("div", { class: "mha-compare__field" },
      el("label", { for: input.id, text: label }), input, hint ? el("small", { text: hint }) : null);

    this.form = el("form", { class: "mha-compare__form", novalidate: true, onsubmit: (e) => { e.preventDefault(); this.generate(); } },
      field("Opening", this.prompt),
      this.promptInfo,
      el("div", { class: "mha-compare__settings" },
        field("New tokens (1–64)", this.tokens),
        field("Temperature", this.temperature, "0 = greedy"),
        field("Seed", this.seed),
        field("Backend", this.backendSelect)),
      el("div", { class: "mha-compare__buttons" }, this.generateButton, this.stopButton, this.presetButton));
    this.notice = el("div", { class: "mha-compare__notice", "aria-live": "polite" });
    this.message = el("div", { class: "mha-compare__message", "aria-live": "polite" });

    this.grid = el("div", { class: "mha-compare__columns" });
    for (const name of MODEL_NAMES) {
      const col = {
        name,
        heading: el("h3", { text: LABELS[name] }),
        facts: el("p", { class: "mha-col__facts" }),
        backend: el("p", { class: "mha-col__backend", text: "Backend: starting…" }),
        progress: el("progress", { max: 100, value: 0, "aria-label": `${LABELS[name]} download` }),
        problem: el("div", { class: "mha-col__problem" }),
        live: el("div", { class: "mha-col__live", "aria-label": `${LABELS[name]} continuation` }),
        timing: el("p", { class: "mha-col__timing" }),
        saved: el("div", { class: "mha-col__saved" }),
        steps: [],
        ids: [],
        done: false,
        endedWithEos: false,
        totalMs: 0,
      };
      col.node = el("section", { class: "mha-col", "data-model": name, "aria-label": LABELS[name] },
        col.heading, col.facts, col.backend, col.progress, col.problem,
        el("h4", { class: "mha-col__label", text: "Live, on this device" }), col.live, col.timing, col.saved);
      this.columns[name] = col;
      this.grid.append(col.node);
    }

    this.inspector = el("section", { class: "mha-compare__inspector", "aria-live": "polite", hidden: true });
    this.root.replaceChildren(this.status, this.alerts, this.form, this.notice, this.message, this.grid, this.inspector);
  }

  setStatus(text, percent = null) {
    this.statusText.textContent = text;
    if (percent === null) this.progress.removeAttribute("value");
    else this.progress.value = Math.max(0, Math.min(100, percent));
  }

  addNotice(text) {
    if (!text || this.notices.includes(text)) return;
    this.notices.push(text);
    this.notice.append(el("p", { class: "mha-panel mha-panel--notice", role: "status", text }));
  }

  showMessage(text, kind = "info") {
    this.message.replaceChildren(text ? el("p", { class: `mha-panel mha-panel--${kind}`, text }) : "");
  }

  // ------------------------------------------------------------ loading

  async start() {
    const problem = supportProblem();
    if (problem) {
      this.fail("This browser cannot run the models", `${problem}. Try a current Chrome, Edge, Firefox or Safari; the rest of the lesson still works.`);
      return this.readyState();
    }
    // Everything that does not depend on something else starts at once: the
    // JSON files, the WebGPU probe and the onnxruntime import (cached by loadOrt).
    const evidencePromise = loadJSON("wasm_assets/evidence.json");
    evidencePromise.catch(() => {});
    resolveBackend(this.preference).then(({ backend }) => loadOrt(backend)).catch(() => {});
    let manifest;
    try {
      [manifest, this.vocabJson] = await Promise.all([loadJSON("wasm_assets/models/manifest.json"), loadJSON("wasm_assets/vocab.json")]);
      this.vocab = new Vocabulary(this.vocabJson);
    } catch (err) {
      this.fail("The models are missing from this site",
        `${err.message}. If you built this site yourself, run \`make models\` (or restore wasm_assets/) and build again; otherwise reload the page later.`);
      return this.readyState();
    }
    if (this.disposed) return this.readyState();
    this.T = manifest.T ?? this.vocab.T;
    for (const entry of manifest.models || []) this.meta[entry.name] = entry;
    const opening = this.openAll(this.preference);
    try {
      this.evidence = await evidencePromise;
    } catch (err) {
      this.evidence = null;
      this.addNotice(`The saved continuations are not available (${err.message}).`);
    }
    this.preset = this.evidence && this.evidence.preset ? this.evidence.preset : null;
    this.prompt.value = this.preset ? this.preset.prompt : FALLBACK_PROMPT;
    this.presetButton.hidden = !this.preset;
    this.describePrompt();
    this.fillFacts();
    await opening;
    return this.readyState();
  }

  readyState() {
    return {
      ok: Object.keys(this.runners).length > 0,
      backends: this.backends(),
      notices: [...this.notices],
      errors: { ...this.errors },
      crossOriginIsolated: Boolean(globalThis.crossOriginIsolated),
      threads: threadCount(),
      build: loadedBuild(),
      timings: JSON.parse(JSON.stringify(this.timings)),
      readyMs: this.readyMs ?? null, // ms since navigation started (performance.now())
    };
  }

  fail(title, message) {
    this.alerts.append(panel("error", title, message));
    this.failed = true;
    this.setStatus(title, 0);
    this.progress.hidden = true;
    this.generateButton.disabled = true;
    for (const col of Object.values(this.columns)) {
      col.progress.hidden = true;
      col.backend.textContent = "Backend: not started";
    }
  }

  fillFacts() {
    for (const name of MODEL_NAMES) {
      const m = this.meta[name];
      const col = this.columns[name];
      if (!m) {
        col.facts.textContent = "";
        continue;
      }
      col.heading.textContent = m.label || LABELS[name];
      const parts = [];
      if (Number.isFinite(m.parameters)) parts.push(`${(m.parameters / 1e6).toFixed(2)} M parameters`);
      const ppl = this.evidence?.aggregates?.[name]?.perplexity_mean;
      if (Number.isFinite(ppl)) parts.push(`test perplexity ${ppl.toFixed(1)}`);
      if (Number.isFinite(m.bytes)) parts.push(formatBytes(m.bytes));
      col.facts.textContent = parts.join(" · ");
    }
  }

  async openAll(preference) {
    const runId = ++this.runId;
    this.generateButton.disabled = true;
    await this.releaseRunners();
    this.errors = {};
    this.failed = false;
    for (const col of Object.values(this.columns)) col.problem.replaceChildren();
    const names = MODEL_NAMES.filter((n) => this.meta[n]);
    for (const name of MODEL_NAMES) {
      if (!this.meta[name]) this.columnProblem(name, "This model is not listed in the site's manifest.");
    }
    const loadedBytes = Object.fromEntries(names.map((n) => [n, 0]));
    const totalBytes = Object.fromEntries(names.map((n) => [n, this.meta[n].bytes || 0]));
    const updateProgress = () => {
      if (this.failed) return; // a failure's message stays; downloads still finishing must not replace it
      const loaded = Object.values(loadedBytes).reduce((a, b) => a + b, 0);
      const total = Object.values(totalBytes).reduce((a, b) => a + b, 0);
      const pct = total ? (100 * loaded) / total : 0;
      this.setStatus(`Downloading the models: ${formatBytes(loaded)} of ${formatBytes(total)} (${Math.round(pct)}%)`, pct);
    };
    updateProgress();
    // Downloads start before (and run alongside) the runtime import.
    const downloads = Object.fromEntries(names.map((name) => {
      const col = this.columns[name];
      col.progress.hidden = false;
      col.backend.textContent = "Backend: starting…";
      const t0 = performance.now();
      this.timings[name] = {};
      const promise = loadBytes(`wasm_assets/${this.meta[name].file}`, {
        bytes: this.meta[name].bytes,
        sha256: this.meta[name].sha256,
        onProgress: ({ loaded, total }) => {
          loadedBytes[name] = loaded;
          if (total) totalBytes[name] = total;
          col.progress.value = total ? (100 * loaded) / total : 0;
          updateProgress();
        },
      }).then((bytes) => {
        this.timings[name].download_ms = performance.now() - t0;
        return bytes;
      });
      promise.catch(() => {});
      return [name, promise];
    }));
    let { backend, note } = await resolveBackend(preference);
    this.addNotice(note);
    let ort;
    try {
      ort = await loadOrt(backend);
    } catch (err) {
      if (err instanceof BuildMismatchError) {
        this.offerReload(preference);
        backend = "wasm";
        ort = await loadOrt("wasm").catch((e) => e);
      } else if (backend === "webgpu") {
        this.addNotice(`The WebGPU runtime did not load (${err.message}); using WebAssembly.`);
        backend = "wasm";
        ort = await loadOrt("wasm").catch((e) => e);
      } else {
        ort = err;
      }
      if (ort instanceof Error) {
        this.fail("The runtime did not load", `${ort.message}. ${ort.advice || "Reload the page; if it keeps failing, your browser may block WebAssembly."}`);
        return;
      }
    }
    if (this.disposed || runId !== this.runId) return;
    await Promise.all(names.map(async (name) => {
      const col = this.columns[name];
      let bytes;
      try {
        bytes = await downloads[name];
      } catch (err) {
        const what = err instanceof AssetError && err.kind === "corrupt" ? "is damaged" : "could not be downloaded";
        this.columnProblem(name, `The ${LABELS[name]} model ${what}: ${err.message}. Reload the page; if you built the site, run \`make models\` and rebuild.`);
        return;
      }
      if (this.disposed || runId !== this.runId) return;
      try {
        const runner = await this.createRunner(ort, bytes, name, backend);
        if (this.disposed || runId !== this.runId) {
          await runner.release();
          return;
        }
        this.runners[name] = runner;
        col.backend.textContent = `Backend: ${this.backendText(runner.backend)}`;
      } catch (err) {
        this.columnProblem(name, `The ${LABELS[name]} model could not start: ${err.message}. It may be damaged; reload the page or rebuild the site.`);
      } finally {
        col.progress.hidden = true;
      }
    }));
    if (this.disposed || runId !== this.runId) return;
    const started = Object.keys(this.runners).length;
    if (started) {
      const used = [...new Set(Object.values(this.runners).map((r) => this.backendText(r.backend)))].join(" and ");
      this.setStatus(`Ready: ${started} of ${names.length || 3} models running on ${used}.`, 100);
      this.generateButton.disabled = false;
      this.readyMs = performance.now();
      // One untimed run per model, so the first generated token is timed fairly
      // (runs are queued, so a Generate click simply waits for these).
      for (const [name, runner] of Object.entries(this.runners)) {
        if (this.timings[name].warmup_ms !== undefined) continue;
        const t = performance.now();
        runner.run(contextWindow([BOS_ID], this.T)).then(() => {
          this.timings[name].warmup_ms = performance.now() - t;
        }, () => {});
      }
    } else {
      this.setStatus("No model could start; each model's column says why.", 0);
    }
    this.progress.hidden = Boolean(started);
  }

  backendText(backend) {
    if (backend === "wasm") {
      const n = threadCount();
      return `${BACKEND_LABELS.wasm} (${n} thread${n > 1 ? "s" : ""})`;
    }
    return BACKEND_LABELS[backend] || backend;
  }

  // A session on `backend`; a WebGPU session must also pass one test run,
  // otherwise the model falls back to WebAssembly with a visible notice.
  async createRunner(ort, bytes, name, backend) {
    const meta = { name, T: this.T, heads: this.meta[name].heads ?? 0 };
    const timing = this.timings[name] || (this.timings[name] = {});
    if (backend === "webgpu") {
      let runner = null;
      try {
        let t = performance.now();
        runner = await ModelRunner.create(ort, bytes, meta, "webgpu");
        timing.session_ms = runner.createMs;
        t = performance.now();
        await runner.run(contextWindow([BOS_ID], this.T));
        timing.warmup_ms = performance.now() - t;
        return runner;
      } catch (err) {
        if (runner) await runner.release();
        this.addNotice(`WebGPU failed for ${LABELS[name]} (${err.message}); it runs on WebAssembly instead.`);
      }
    }
    const runner = await ModelRunner.create(ort, bytes, meta, "wasm");
    timing.session_ms = runner.createMs;
    return runner;
  }

  columnProblem(name, message) {
    this.errors[name] = message;
    const col = this.columns[name];
    col.progress.hidden = true;
    col.backend.textContent = "Backend: not running";
    col.problem.replaceChildren(panel("error", "Not available.", message));
  }

  offerReload(preference) {
    const button = el("button", {
      type: "button", class: "md-button", text: "Reload with WebGPU",
      onclick: () => {
        savePreference(preference);
        location.reload();
      },
    });
    this.alerts.replaceChildren(panel("notice", "WebGPU needs a reload.",
      "This page already started the WebAssembly-only runtime; reload to switch to WebGPU. Until then the models keep running on WebAssembly.", button));
  }

  async changeBackend(preference) {
    this.preference = preference;
    savePreference(preference);
    this.stop();
    this.notices = [];
    this.notice.replaceChildren();
    this.alerts.replaceChildren();
    for (const col of Object.values(this.columns)) col.backend.textContent = "Backend: starting…";
    this.ready = this.openAll(preference).then(() => this.readyState());
    return this.ready;
  }

  async releaseRunners() {
    const runners = Object.values(this.runners);
    this.runners = {};
    const extras = [...this.extraRunners.values()];
    this.extraRunners.clear();
    await Promise.all([
      ...runners.map((r) => r.release()),
      ...extras.map((p) => p.then((r) => r.release(), () => {})),
    ]);
  }

  backends() {
    return Object.fromEntries(Object.entries(this.runners).map(([n, r]) => [n, r.backend]));
  }

  // ------------------------------------------------------------ prompt

  describePrompt() {
    if (!this.vocab) return;
    const text = this.prompt.value;
    if (text.length > MAX_PROMPT_CHARS) {
      this.promptInfo.textContent = `The opening has ${text.length.toLocaleString()} characters; only the first ${MAX_PROMPT_CHARS.toLocaleString()} are used (and the models read just the last ${this.T} tokens of those).`;
      return;
    }
    const tokens = tokenize(text);
    const unknown = tokens.filter((t) => !this.vocab.stoi.has(t)).length;
    const parts = [];
    if (!tokens.length) parts.push("No tokens: the models will start a story from the beginning marker.");
    else parts.push(`${tokens.length} token${tokens.length === 1 ? "" : "s"}`);
    if (unknown) parts.push(`${unknown} outside the vocabulary (read as unknown)`);
    if (tokens.length + 1 > this.T) parts.push(`the models read only the last ${this.T} ids`);
    this.promptInfo.textContent = parts.join("; ") + (tokens.length ? "." : "");
  }

  usePreset() {
    if (!this.preset) return;
    this.prompt.value = this.preset.prompt;
    this.tokens.value = String(this.preset.max_new_tokens || DEFAULT_NEW_TOKENS);
    this.temperature.value = "0";
    this.describePrompt();
    this.prompt.focus();
  }

  readOptions() {
    const maxNewTokens = Number(this.tokens.value);
    const temperature = Number(this.temperature.value === "" ? 0 : this.temperature.value);
    const seed = Number(this.seed.value === "" ? 0 : this.seed.value);
    return checkOptions({ maxNewTokens, temperature, seed });
  }

  isPresetRun(text, options) {
    return Boolean(this.preset) && text === this.preset.prompt && options.temperature === 0 &&
      options.maxNewTokens === (this.preset.max_new_tokens || DEFAULT_NEW_TOKENS);
  }

  // ------------------------------------------------------------ generation

  stop() {
    if (this.busy) this.runId++;
  }

  async generate(overrides = {}) {
    if (!this.vocab || !Object.keys(this.runners).length) {
      this.showMessage("The models are not ready yet.", "error");
      return null;
    }
    if (overrides.prompt !== undefined) this.prompt.value = String(overrides.prompt);
    if (overrides.maxNewTokens !== undefined) this.tokens.value = String(overrides.maxNewTokens);
    if (overrides.temperature !== undefined) this.temperature.value = String(overrides.temperature);
    if (overrides.seed !== undefined) this.seed.value = String(overrides.seed);
    let options;
    try {
      options = this.readOptions();
    } catch (err) {
      this.showMessage(`${err.message}.`, "error");
      return null;
    }
    this.stop();
    const runId = ++this.runId;
    this.busy = true;
    this.generateButton.disabled = true;
    this.stopButton.disabled = false;
    this.closeInspector();
    let text = this.prompt.value;
    const notes = [];
    if (text.length > MAX_PROMPT_CHARS) {
      text = text.slice(0, MAX_PROMPT_CHARS);
      notes.push(`Only the first ${MAX_PROMPT_CHARS.toLocaleString()} characters were used.`);
    }
    const promptTokens = tokenize(text);
    if (!promptTokens.length) notes.push("The opening has no words, so each model starts a story from scratch.");
    if (promptTokens.length + 1 > this.T) notes.push(`The opening has ${promptTokens.length} tokens; each model reads only the last ${this.T} ids.`);
    this.showMessage(notes.join(" "));
    const history = promptHistory(this.vocab, text);
    const preset = this.isPresetRun(text, options);
    const rngs = {};
    const active = MODEL_NAMES.filter((n) => this.runners[n]);
    for (const name of MODEL_NAMES) {
      const col = this.columns[name];
      Object.assign(col, { steps: [], ids: [], done: !this.runners[name], endedWithEos: false, totalMs: 0, history: [...history] });
      col.timing.textContent = "";
      col.saved.replaceChildren();
      this.renderPromptTokens(col, promptTokens);
      rngs[name] = options.temperature > 0 ? new Mulberry32(options.seed) : null;
    }
    const started = performance.now();
    for (let index = 0; index < options.maxNewTokens; index++) {
      const pending = active.filter((n) => !this.columns[n].done);
      if (!pending.length) break;
      for (const name of pending) {
        if (runId !== this.runId || this.disposed) break;
        await this.step(name, index, options, rngs[name]);
      }
      if (runId !== this.runId || this.disposed) break;
      await yieldToBrowser();
    }
    const stopped = runId !== this.runId;
    const wallMs = performance.now() - started;
    const results = {};
    for (const name of active) {
      const col = this.columns[name];
      const tokens = this.vocab.decode(col.ids);
      results[name] = {
        ids: [...col.ids], tokens, text: detokenize(tokens), ended_with_eos: col.endedWithEos,
        backend: this.runners[name]?.backend ?? null, ms_per_token: col.steps.length ? col.totalMs / col.steps.length : null,
        total_ms: col.totalMs, error: this.errors[name] ?? null,
      };
      this.finishColumn(col, preset, stopped);
    }
    if (!this.disposed) {
      this.busy = false;
      this.generateButton.disabled = !Object.keys(this.runners).length;
      this.stopButton.disabled = true;
      if (stopped) this.showMessage("Stopped.");
    }
    this.lastRun = { prompt: text, options, preset, results, wall_ms: wallMs, stopped };
    return this.lastRun;
  }

  async step(name, index, options, rng) {
    const col = this.columns[name];
    const window = contextWindow(col.history, this.T);
    let output;
    let id;
    const t0 = performance.now();
    try {
      output = await this.runners[name].run(window);
      id = chooseNext(output.logits, options.temperature, rng);
    } catch (err) {
      const runner = this.runners[name];
      if (runner && runner.backend === "webgpu" && !this.disposed) {
        // WebGPU failed mid-story: continue this model on WebAssembly.
        this.addNotice(`WebGPU failed for ${LABELS[name]} while generating (${err.message}); switched it to WebAssembly.`);
        try {
          const ort = await loadOrt("webgpu");
          const bytes = await loadBytes(`wasm_assets/${this.meta[name].file}`, { bytes: this.meta[name].bytes });
          const fresh = await ModelRunner.create(ort, bytes, { name, T: this.T, heads: this.meta[name].heads ?? 0 }, "wasm");
          this.runners[name] = fresh;
          runner.release();
          col.backend.textContent = `Backend: ${this.backendText("wasm")}`;
          return this.step(name, index, options, rng);
        } catch (err2) {
          err = err2;
        }
      }
      col.done = true;
      this.errors[name] = err.message;
      col.problem.replaceChildren(panel("error", "Generation stopped.", `${LABELS[name]}: ${err.message}.`));
      return;
    }
    const ms = performance.now() - t0;
    col.totalMs += ms;
    col.steps.push({ window, logits: output.logits, attention: output.attention, id, ms });
    if (id === EOS_ID) {
      col.done = true;
      col.endedWithEos = true;
      col.live.append(el("span", { class: "mha-token mha-token--end", text: " [end of story]" }));
      return;
    }
    col.history.push(id);
    col.ids.push(id);
    const stepIndex = col.steps.length - 1;
    const token = this.vocab.itos[id];
    col.live.append(" ", el("button", {
      type: "button", class: "mha-token", "data-step": stepIndex, text: showToken(token),
      "aria-label": `${showToken(token)}: generated token ${stepIndex + 1} of ${LABELS[name]}; show what the models saw`,
      onclick: () => this.inspect(name, stepIndex),
    }));
    if (index + 1 === options.maxNewTokens) col.done = true;
    col.timing.textContent = `${col.steps.length} tokens · ${formatMs(col.totalMs / col.steps.length)} per token`;
  }

  // The opening as the learner wrote it (tokenized); words outside the
  // vocabulary are marked, since the models read them as <UNK>.
  renderPromptTokens(col, promptTokens) {
    const cut = Math.max(0, promptTokens.length - SHOWN_PROMPT_TOKENS);
    const prompt = el("span", { class: "mha-col__prompt" });
    if (cut) prompt.append(el("span", { class: "mha-token--cut", text: `… (${cut} earlier tokens) ` }));
    promptTokens.slice(cut).forEach((tok, i) => {
      if (i) prompt.append(" ");
      prompt.append(this.vocab.stoi.has(tok)
        ? tok
        : el("span", { class: "mha-token--unk", title: "outside the vocabulary: the models read it as unknown", text: tok }));
    });
    col.live.replaceChildren(prompt);
  }

  finishColumn(col, preset, stopped) {
    if (col.steps.length) {
      const n = col.steps.length;
      col.timing.textContent = `${n} step${n === 1 ? "" : "s"} · ${formatMs(col.totalMs / n)} per token · ${formatMs(col.totalMs)} in all` +
        (col.endedWithEos ? " · ended the story" : "");
    }
    col.saved.replaceChildren();
    const saved = this.preset?.continuations?.[col.name];
    if (!saved) return;
    const savedTokens = saved.tokens || this.vocab.decode(saved.ids || []);
    const box = el("div", { class: "mha-saved" },
      el("h4", { class: "mha-col__label", text: "Saved, seed-11 checkpoint (greedy, 24 tokens)" }),
      el("p", { class: "mha-saved__text", text: detokenize(savedTokens) + (saved.ended_with_eos ? " [end of story]" : "") }));
    if (preset && !stopped) {
      const same = JSON.stringify(col.ids) === JSON.stringify(saved.ids) && col.endedWithEos === Boolean(saved.ended_with_eos);
      box.append(el("p", {
        class: `mha-match mha-match--${same ? "yes" : "no"}`, "data-match": same ? "yes" : "no",
        text: same ? "✓ live = saved: this device reproduced the saved output exactly." : "✗ live ≠ saved: the live output differs from the saved one.",
      }));
    } else {
      box.append(el("p", { class: "mha-match mha-match--na", "data-match": "na", text: "The saved output belongs to the preset opening with greedy decoding and 24 tokens." }));
    }
    col.saved.append(box);
  }

  // ------------------------------------------------------------ inspector

  closeInspector() {
    this.selected = null;
    this.inspector.hidden = true;
    this.inspector.replaceChildren();
    for (const b of this.root.querySelectorAll(".mha-token[aria-pressed]")) b.removeAttribute("aria-pressed");
  }

  async inspect(name, stepIndex) {
    const col = this.columns[name];
    const step = col.steps[stepIndex];
    if (!step) return;
    for (const b of this.root.querySelectorAll(".mha-token[aria-pressed]")) b.removeAttribute("aria-pressed");
    const button = col.live.querySelector(`.mha-token[data-step="${stepIndex}"]`);
    if (button) button.setAttribute("aria-pressed", "true");
    this.selected = { name, stepIndex };
    const outputs = {};
    await Promise.all(MODEL_NAMES.map(async (other) => {
      if (other === name) outputs[other] = step;
      else if (this.runners[other]) {
        try {
          outputs[other] = await this.runners[other].run(step.window);
        } catch (err) {
          outputs[other] = { error: err.message };
        }
      }
    }));
    if (!this.selected || this.selected.name !== name || this.selected.stepIndex !== stepIndex) return;
    this.renderInspector(name, stepIndex, step, outputs);
  }

  renderInspector(name, stepIndex, step, outputs) {
    const chosen = this.vocab.itos[step.id];
    const real = [];
    step.window.forEach((id, slot) => {
      if (id !== PAD_ID) real.push(slot);
    });
    const heading = el("h3", { tabindex: "-1" },
      `Step ${stepIndex + 1} of ${LABELS[name]}: before it chose “`, el("span", { class: "mha-chosen", text: showToken(chosen) }), "”");
    const close = el("button", { type: "button", class: "md-button", text: "Close", onclick: () => this.closeInspector() });
    const intro = el("p", {
      text: `All three models read the same ${real.length}-token window (the ${this.T}-slot context before this token; ` +
        "empty padding slots are left out). Each heatmap column is one head; a cell is how much the final position attended to that token.",
    });
    const maps = el("div", { class: "mha-heatmaps" });
    const table = this.attentionTable(step.window, real, outputs);
    if (table) maps.append(table);
    else maps.append(el("p", { text: "The attention models are not running, so there is no heatmap." }));
    const tops = el("div", { class: "mha-topk" });
    for (const other of MODEL_NAMES) {
      const out = outputs[other];
      if (!out) continue;
      tops.append(this.topList(other, out));
    }
    this.inspector.replaceChildren(el("div", { class: "mha-inspector__head" }, heading, close), intro, maps,
      el("h4", { text: "Most likely next tokens" }), tops);
    this.inspector.hidden = false;
  }

  attentionTable(window, real, outputs) {
    const heads = [];
    for (const name of ["one_head", "four_heads"]) {
      const out = outputs[name];
      if (!out || !out.attention) continue;
      const n = this.meta[name]?.heads || Math.round(out.attention.length / this.T);
      for (let h = 0; h < n; h++) {
        const weights = real.map((slot) => out.attention[h * this.T + slot]);
        heads.push({ label: name === "one_head" ? "one head" : `head ${h + 1}`, group: name, weights });
      }
    }
    if (!heads.length) return null;
    const caption = el("caption", {
      text: "Final-query attention over the window. Colours (viridis) are scaled per column to its largest weight; numbers are percentages.",
    });
    const headRow = el("tr", {}, el("th", { scope: "col", text: "token" }),
      heads.map((h) => el("th", { scope: "col", class: `mha-heat__h mha-heat__h--${h.group}`, text: h.label })));
    const groupRow = el("tr", {}, el("td", {}),
      heads.some((h) => h.group === "one_head") ? el("th", { scope: "colgroup", colspan: 1, text: "One head" }) : null,
      heads.some((h) => h.group === "four_heads") ? el("th", { scope: "colgroup", colspan: heads.filter((h) => h.group === "four_heads").length, text: "Four heads" }) : null);
    const maxes = heads.map((h) => Math.max(1e-9, ...h.weights));
    const body = el("tbody");
    real.forEach((slot, r) => {
      const id = window[slot];
      const tok = id === BOS_ID ? "⟨start⟩" : showToken(this.vocab.itos[id]);
      body.append(el("tr", {}, el("th", { scope: "row", class: "mha-heat__tok", text: tok }),
        heads.map((h, c) => {
          const w = h.weights[r];
          const { background, color } = cellColours(w / maxes[c]);
          return el("td", { class: "mha-heat__cell", style: `background:${background};color:${color}`, text: `${Math.round(w * 100)}` });
        })));
    });
    return el("div", { class: "mha-heat__scroll" },
      el("table", { class: "mha-heat" }, caption, el("thead", {}, groupRow, headRow), body));
  }

  topList(name, out) {
    const box = el("div", { class: "mha-topk__model" }, el("h5", { text: LABELS[name] }));
    if (out.error) {
      box.append(el("p", { text: out.error }));
      return box;
    }
    const p = probabilities(out.logits);
    const list = el("ol", { class: "mha-topk__list" });
    for (const id of topK(p, 5)) {
      const pct = p[id] * 100;
      list.append(el("li", {},
        el("span", { class: "mha-topk__tok", text: id === EOS_ID ? "[end of story]" : showToken(this.vocab.itos[id]) }),
        el("span", { class: "mha-topk__bar", "aria-hidden": "true" }, el("span", { style: `width:${Math.max(1, pct).toFixed(1)}%` })),
        el("span", { class: "mha-topk__p", text: `${pct.toFixed(1)}%` })));
    }
    box.append(list);
    return box;
  }

  // ------------------------------------------------------------ test hook helpers

  async runnerFor(name, backend) {
    if (!this.meta[name]) throw new Error(`unknown model ${name}`);
    const active = this.runners[name];
    if (!backend || (active && active.backend === backend)) {
      if (!active) throw new Error(`${name} is not running`);
      return active;
    }
    const key = `${backend}:${name}`;
    if (!this.extraRunners.has(key)) {
      const promise = (async () => {
        const ort = await loadOrt(backend === "webgpu" ? "webgpu" : loadedBuild() || "wasm");
        const bytes = await loadBytes(`wasm_assets/${this.meta[name].file}`, { bytes: this.meta[name].bytes });
        return ModelRunner.create(ort, bytes, { name, T: this.T, heads: this.meta[name].heads ?? 0 }, backend);
      })();
      promise.catch(() => this.extraRunners.delete(key));
      this.extraRunners.set(key, promise);
    }
    return this.extraRunners.get(key);
  }

  async headlessGenerate(name, text, options = {}) {
    const runner = await this.runnerFor(name, options.backend);
    const opts = checkOptions(options);
    const rng = opts.temperature > 0 ? new Mulberry32(opts.seed) : null;
    const history = promptHistory(this.vocab, String(text));
    const ids = [];
    const times = [];
    let ended = false;
    for (let i = 0; i < opts.maxNewTokens; i++) {
      const t0 = performance.now();
      const { logits } = await runner.run(contextWindow(history, this.T));
      const id = chooseNext(logits, opts.temperature, rng);
      times.push(performance.now() - t0);
      if (id === EOS_ID) {
        ended = true;
        break;
      }
      history.push(id);
      ids.push(id);
    }
    const tokens = this.vocab.decode(ids);
    return { ids, tokens, text: detokenize(tokens), ended_with_eos: ended, backend: runner.backend, times_ms: times };
  }

  async dispose() {
    this.disposed = true;
    this.runId++;
    await this.releaseRunners();
  }
}

// ---------------------------------------------------------------- test hook

function makeHook(widget) {
  const windowOf = (text) => contextWindow(promptHistory(widget.vocab, String(text)), widget.T);
  return {
    get ready() { return widget.ready; },
    get backend() { return widget.backends(); },
    get notices() { return [...widget.notices]; },
    get errors() { return { ...widget.errors }; },
    get lastRun() { return widget.lastRun; },
    tokenize: (text) => tokenize(String(text)),
    encode: (text) => widget.vocab.encode(String(text)),
    window: (text) => windowOf(text),
    async logits(name, text, options = {}) {
      return (await (await widget.runnerFor(name, options.backend)).run(windowOf(text))).logits;
    },
    async logitsForWindow(name, window, options = {}) {
      return (await (await widget.runnerFor(name, options.backend)).run(Array.from(window))).logits;
    },
    async attentionForWindow(name, window, options = {}) {
      return (await (await widget.runnerFor(name, options.backend)).run(Array.from(window))).attention;
    },
    // Times `runs` single-window runs (B = 1) after `warmup` untimed ones; returns the times in ms.
    async time(name, text, { runs = 200, warmup = 10, backend } = {}) {
      const runner = await widget.runnerFor(name, backend);
      const w = windowOf(text);
      for (let i = 0; i < warmup; i++) await runner.run(w);
      const times = [];
      for (let i = 0; i < runs; i++) {
        const t0 = performance.now();
        await runner.run(w);
        times.push(performance.now() - t0);
      }
      return times;
    },
    generate: (name, text, options = {}) => widget.headlessGenerate(name, text, options),
    run: (options = {}) => widget.generate(options),
    select: (name, stepIndex) => widget.inspect(name, stepIndex),
    setBackend: (preference) => {
      widget.backendSelect.value = preference;
      return widget.changeBackend(preference);
    },
    probeWebGPU: () => probeWebGPU(),
  };
}

// ---------------------------------------------------------------- widget API

export function mount(root) {
  if (!root || root.dataset.mhaMounted === "true") return current?.ready;
  if (current && current.root !== root) dispose();
  root.dataset.mhaMounted = "true";
  current = new CompareWidget(root);
  window.mhaCompare = makeHook(current);
  return current.ready;
}

export function dispose() {
  const widget = current;
  current = null;
  if (!widget) return undefined;
  if (widget.root) delete widget.root.dataset.mhaMounted;
  if (window.mhaCompare) delete window.mhaCompare;
  return widget.dispose();
}
