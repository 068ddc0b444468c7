// The "Compare their stories" widget: the models of the manifest continue the
// same opening side by side, in this browser.
//
// mount(root) builds the UI inside root (user text only ever goes through
// textContent); dispose() stops generation, releases the sessions and removes
// the test hook window.mhaCompare. The parts, one job each:
//   view.js        layout, status line and messages
//   preferences.js the learner's backend choice
//   models.js      downloads, sessions, WebGPU fallback
//   generation.js  a run on the page (runtime/generate.js's Generation per model)
//   columns.js     what a column shows of a run
//   inspector.js   the token inspector
//   hook.js        window.mhaCompare

import { loadJSON } from "../runtime/assets.js";
import { contextLength, contextProblem, contextWindow } from "../runtime/context.js";
import { promptHistory } from "../runtime/generate.js";
import { loadOrt, loadedBuild, resolveBackend, supportProblem, runningThreads } from "../runtime/ort.js";
import { Vocabulary, detokenize, tokenize } from "../runtime/tokenizer.js";
import { showPrompt, showSaved, showTiming } from "./columns.js";
import { el } from "../runtime/dom.js";
import { claim, release } from "../runtime/widget.js";
import { formatBytes, tokenText } from "./format.js";
import { generateColumns } from "./generation.js";
import { addHeadToggles, inspectRequest } from "./head_toggles.js";
import { makeHook } from "./hook.js";
import { openInspector } from "./inspector.js";
import { ModelSet } from "./models.js";
import { parseOptions } from "./options.js";
import { readPreference, savePreference } from "./preferences.js";
import { CompareView } from "./view.js";

const MAX_PROMPT_CHARS = 100000;
const FALLBACK_PROMPT = "Once upon a time, there was a little girl named Lily. She";

const state = new Map(); // root -> {saved, widget}: one compare widget per page

class CompareWidget {
  constructor(root) {
    this.root = root;
    this.disposed = false;
    this.runId = 0;
    this.busy = false;
    this.preference = readPreference();
    this.models = null;
    this.selected = null;
    this.lastRun = null;
    this.states = {};
    this.limit = null; // the manifest's generation.max_new_tokens, once read
    this.minTemperature = Number.MIN_VALUE; // until the manifest says
    this.defaultTokens = null; // the preset's token count, once known
    this.view = new CompareView(root, {
      preference: this.preference,
      limit: this.limit,
      onFieldChange: (key, clearOnly) => this.checkField(key, clearOnly),
      onGenerate: () => this.generate(),
      onStop: () => this.stop(),
      onPreset: () => this.usePreset(),
      onSentence: () => this.useSentence(),
      onBackend: (preference) => this.changeBackend(preference),
      onPromptInput: () => {
        this.describePrompt();
        if (!this.lastRun) this.showSavedBoxes();
      },
    });
    this.ready = this.start();
    this.ready.then((state) => this.openRequested(state));
  }

  // ?prompt=...&inspect=MODEL&head=K (the head atlas's links): run that opening
  // and open the inspector on MODEL's first step, with head K's switch in focus.
  async openRequested(state) {
    const request = inspectRequest();
    if (!request || !state.ok || this.disposed) return;
    this.focus = { model: request.model, head: request.head };
    await this.generate({ prompt: request.prompt });
    // request.model comes from the address: only the manifest's own names count
    // ("constructor" or "__proto__" must not reach an object lookup).
    if (!this.modelList.some((m) => m.name === request.model)) return;
    if (Object.hasOwn(this.states, request.model) && this.states[request.model]?.steps.length)
      await this.inspect(request.model, 0);
  }

  // ------------------------------------------------------------ loading

  async start() {
    const view = this.view;
    const problem = supportProblem();
    if (problem) {
      view.fail(
        "This browser cannot run the models",
        `${problem}. Try a current Chrome, Edge, Firefox or Safari; the rest of the lesson still works.`,
      );
      return this.readyState();
    }
    // Everything that does not depend on something else starts at once: the
    // JSON files, the WebGPU probe and the onnxruntime import (cached by loadOrt).
    const evidencePromise = loadJSON("wasm_assets/evidence.json");
    evidencePromise.catch(() => {});
    resolveBackend(this.preference)
      .then(({ backend }) => loadOrt(backend))
      .catch(() => {});
    let manifest;
    try {
      [manifest, this.vocabJson] = await Promise.all([
        loadJSON("wasm_assets/models/manifest.json"),
        loadJSON("wasm_assets/vocab.json"),
      ]);
      this.vocab = new Vocabulary(this.vocabJson);
    } catch (err) {
      view.fail(
        "The models' files could not be loaded",
        `${err.message}. If you built this site yourself, run \`make models\` (or restore wasm_assets/) and build again; otherwise reload the page later.`,
      );
      return this.readyState();
    }
    if (this.disposed) return this.readyState();
    const mismatch = this.manifestProblem(manifest);
    if (mismatch) {
      view.fail(
        "The site's model files do not belong together",
        `${mismatch}. If you built this site yourself, run \`make models\` and build again; otherwise reload the page later.`,
      );
      return this.readyState();
    }
    this.T = contextLength(manifest, this.vocab);
    const generation = manifest.generation; // its limit and excluded ids are checked by manifestProblem
    this.limit = generation.max_new_tokens;
    // The smallest temperature above 0 (export/defaults.py): below it every model would emit padding.
    this.minTemperature =
      Number.isFinite(generation.min_temperature) && generation.min_temperature > 0
        ? generation.min_temperature
        : Number.MIN_VALUE;
    this.excluded = generation.excluded_ids;
    view.setLimit(this.limit);
    this.manifestPreset = manifest.preset || {};
    const entries = manifest.models.filter((m) => m && m.name && m.file);
    this.modelList = entries.map((m) => ({ ...m, label: m.label || m.name, heads: m.heads ?? 0 }));
    view.buildColumns(this.modelList);
    this.models = new ModelSet(view, {
      models: this.modelList,
      T: this.T,
      pad: this.vocab.special.PAD,
      bos: this.vocab.special.BOS,
    });
    this.models.onBuildMismatch = (preference) =>
      view.offerReload(() => {
        savePreference(preference);
        location.reload();
      });
    const opening = this.open(this.preference);
    try {
      this.evidence = await evidencePromise;
    } catch (err) {
      this.evidence = null;
      view.addNotice(`The saved continuations are not available (${err.message}).`);
    }
    this.preset = this.evidence && this.evidence.preset ? this.evidence.preset : null;
    this.defaultTokens = this.manifestPreset.max_new_tokens ?? this.preset?.max_new_tokens ?? this.limit;
    this.presetSeed = this.manifestPreset.seed ?? this.preset?.seed ?? null;
    view.tokens.value = String(this.defaultTokens);
    // The preset's seed is the training seed of the models running here; as the
    // sampling seed it is just a memorable default.
    if (Number.isSafeInteger(this.presetSeed)) view.seed.value = String(this.presetSeed);
    view.prompt.value = this.preset ? this.preset.prompt : FALLBACK_PROMPT;
    view.presetButton.hidden = !this.preset;
    this.describePrompt();
    this.fillFacts();
    this.showSavedBoxes();
    await opening;
    return this.readyState();
  }

  async open(preference) {
    const ok = await this.models.open(preference);
    if (ok && !this.disposed && !this.busy) this.view.generateButton.disabled = false;
    return ok;
  }

  readyState() {
    const models = this.models;
    return {
      ok: Boolean(models) && Object.keys(models.runners).length > 0,
      backends: models ? models.backends() : {},
      notices: [...this.view.notices],
      errors: models ? { ...models.errors } : {},
      crossOriginIsolated: Boolean(globalThis.crossOriginIsolated),
      threads: runningThreads(),
      build: loadedBuild(),
      timings: models ? JSON.parse(JSON.stringify(models.timings)) : {},
      readyMs: models?.readyMs ?? null, // ms since navigation started (performance.now())
    };
  }

  // A manifest of the wrong shape, or one that does not match the vocabulary,
  // is refused in words rather than producing blank columns.
  manifestProblem(manifest) {
    if (!manifest || !Array.isArray(manifest.models) || !manifest.models.length) {
      return "wasm_assets/models/manifest.json lists no models";
    }
    const v = this.vocab;
    const context = contextProblem(manifest, v);
    if (context) return context;
    for (const key of ["PAD", "BOS", "EOS", "UNK"]) {
      if (!Number.isInteger(v.special?.[key])) return `vocab.json gives no ${key} id`;
      if (manifest.special && manifest.special[key] !== v.special[key]) {
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
    if (manifest.C !== undefined && manifest.C !== v.itos.length) {
      return `the manifest says the vocabulary has ${manifest.C} tokens, vocab.json has ${v.itos.length}`;
    }
    return null;
  }

  // The card under each model's name: its size, the test perplexity of the
  // very checkpoint running here (the preset's seed) and the mean ± SD over
  // the seeds, all from the evidence.
  fillFacts() {
    for (const m of this.modelList) {
      const col = this.view.columns[m.name];
      const size = [];
      if (Number.isFinite(m.parameters)) size.push(`${(m.parameters / 1e6).toFixed(2)} M parameters`);
      if (Number.isFinite(m.bytes)) size.push(formatBytes(m.bytes));
      const quality = [];
      const run = (this.evidence?.runs || []).find((r) => r.model === m.name && r.seed === this.presetSeed);
      if (run && Number.isFinite(run.test_perplexity)) {
        quality.push(`Test perplexity ${run.test_perplexity.toFixed(2)} (this seed-${run.seed} model)`);
      }
      const agg = this.evidence?.aggregates?.[m.name];
      if (agg && Number.isFinite(agg.perplexity_mean)) {
        const n = agg.runs ?? agg.seeds?.length;
        const sd = Number.isFinite(agg.perplexity_sd) ? ` ± ${agg.perplexity_sd.toFixed(1)}` : "";
        quality.push(`${agg.perplexity_mean.toFixed(1)}${sd} over ${n ?? "all"} seeds (mean${sd ? " ± SD" : ""})`);
      }
      col.facts.replaceChildren(
        ...[size, quality]
          .filter((p) => p.length)
          .map((p) => el("span", { class: "mha-col__fact", text: p.join("; ") })),
      );
    }
  }

  // The preset's saved continuations, shown while they belong to what the
  // columns show: before any run, when the box holds the preset opening;
  // after a run, when that run continued the preset opening.
  showSavedBoxes() {
    if (!this.modelList) return;
    const run = this.lastRun;
    const presetText = this.preset?.prompt;
    let match;
    let shown;
    if (!run) {
      shown = this.view.prompt.value === presetText;
      match = "pending";
    } else {
      shown = run.prompt === presetText;
      match = run.preset && !run.stopped ? null : "other";
    }
    for (const m of this.modelList) {
      const col = this.view.columns[m.name];
      const saved = shown ? this.preset?.continuations?.[m.name] : null;
      let state = match;
      if (saved && state === null) {
        const r = run.results[m.name];
        state =
          Boolean(r) &&
          JSON.stringify(r.ids) === JSON.stringify(saved.ids) &&
          r.ended_with_eos === Boolean(saved.ended_with_eos);
      }
      showSaved(col, {
        saved,
        vocab: this.vocab,
        maxNewTokens: this.defaultTokens,
        seed: this.presetSeed,
        match: state,
      });
    }
  }

  async changeBackend(preference) {
    this.preference = preference;
    savePreference(preference);
    this.stop();
    this.view.clearNotices();
    for (const col of Object.values(this.view.columns)) col.backend.textContent = "Backend: starting…";
    if (!this.models) return this.ready;
    this.ready = this.open(preference).then(() => this.readyState());
    return this.ready;
  }

  // ------------------------------------------------------------ prompt

  describePrompt() {
    if (!this.vocab) return;
    const text = this.view.prompt.value;
    const info = this.view.promptInfo;
    if (text.length > MAX_PROMPT_CHARS) {
      info.textContent = `The opening has ${text.length.toLocaleString()} characters; only the first ${MAX_PROMPT_CHARS.toLocaleString()} are used (and the models read just the last ${this.T} tokens of those).`;
      return;
    }
    const tokens = tokenize(text);
    const unknown = tokens.filter((t) => !this.vocab.stoi.has(t)).length;
    const parts = [];
    if (!tokens.length) parts.push("No tokens: the models will start a story from the beginning marker.");
    else parts.push(`${tokens.length} token${tokens.length === 1 ? "" : "s"}`);
    if (unknown) parts.push(`${unknown} outside the vocabulary (read as unknown)`);
    if (tokens.length + 1 > this.T) parts.push(`the models read only the last ${this.T} ids`);
    info.textContent = parts.join("; ") + (tokens.length ? "." : "");
  }

  usePreset() {
    if (!this.preset) return;
    const view = this.view;
    view.prompt.value = this.preset.prompt;
    view.tokens.value = String(this.defaultTokens);
    view.temperature.value = "0";
    this.describePrompt();
    view.prompt.focus();
  }

  // The lesson's running sentence, greedy: the model's next word is the guess the home page and page 5 show.
  useSentence() {
    const view = this.view;
    view.prompt.value = this.root.dataset.runningSentence || "";
    view.temperature.value = "0";
    this.describePrompt();
    if (!this.lastRun) this.showSavedBoxes();
    view.prompt.focus();
  }

  fieldTexts() {
    const read = (input) => ({ value: input.value, badInput: Boolean(input.validity && input.validity.badInput) });
    const view = this.view;
    return { tokens: read(view.tokens), temperature: read(view.temperature), seed: read(view.seed) };
  }

  // One field, when the learner leaves it: its message appears or goes.
  checkField(key, clearOnly = false) {
    const { problems = {} } = parseOptions(this.fieldTexts(), this.limit, this.minTemperature);
    this.view.showFieldProblems(problems, key, clearOnly);
  }

  isPresetRun(text, options) {
    return (
      Boolean(this.preset) &&
      text === this.preset.prompt &&
      options.temperature === 0 &&
      options.maxNewTokens === this.defaultTokens
    );
  }

  // ------------------------------------------------------------ generation

  stop() {
    if (this.busy) this.runId++;
  }

  async generate(overrides = {}) {
    const view = this.view;
    if (!this.vocab || !this.models || !Object.keys(this.models.runners).length) {
      view.showMessage("The models are not ready yet.", "error");
      return null;
    }
    if (overrides.prompt !== undefined) view.prompt.value = String(overrides.prompt);
    if (overrides.maxNewTokens !== undefined) view.tokens.value = String(overrides.maxNewTokens);
    if (overrides.temperature !== undefined) view.temperature.value = String(overrides.temperature);
    if (overrides.seed !== undefined) view.seed.value = String(overrides.seed);
    this.describePrompt();
    const { options, problems } = parseOptions(this.fieldTexts(), this.limit, this.minTemperature);
    const firstBad = view.showFieldProblems(problems || {});
    if (!options) {
      const names = Object.keys(problems).map((k) => view.fieldLabel(k));
      view.showMessage(`Generate needs other settings: see the message under ${names.join(" and ")}.`, "error");
      if (firstBad) firstBad.focus();
      return null;
    }
    this.stop();
    const runId = ++this.runId;
    this.activeRun = runId;
    this.busy = true;
    view.generateButton.disabled = true;
    view.stopButton.disabled = false;
    this.closeInspector();
    let text = view.prompt.value;
    const notes = [];
    if (text.length > MAX_PROMPT_CHARS) {
      text = text.slice(0, MAX_PROMPT_CHARS);
      notes.push(`Only the first ${MAX_PROMPT_CHARS.toLocaleString()} characters were used.`);
    }
    const promptTokens = tokenize(text);
    if (!promptTokens.length) notes.push("The opening has no words, so each model starts a story from scratch.");
    if (promptTokens.length + 1 > this.T)
      notes.push(`The opening has ${promptTokens.length} tokens; each model reads only the last ${this.T} ids.`);
    view.showMessage(notes.join(" "));
    const preset = this.isPresetRun(text, options);
    // How each slot of the history reads: BOS, then the words as typed (an
    // unknown word keeps its spelling for the inspector), then the new tokens.
    this.runWords = [
      { text: tokenText(this.vocab, this.vocab.special.BOS), unknown: false },
      ...promptTokens.map((tok) => ({ text: tok, unknown: !this.vocab.stoi.has(tok) })),
    ];
    for (const col of Object.values(view.columns)) {
      showPrompt(col, promptTokens, this.vocab);
      col.saved.replaceChildren();
    }
    const started = performance.now();
    const states = await generateColumns({
      models: this.models,
      view,
      vocab: this.vocab,
      history: promptHistory(this.vocab, text),
      options: { ...options, limit: this.limit, excluded: this.excluded },
      isCurrent: () => runId === this.runId && !this.disposed,
      onSelect: (name, stepIndex) => this.inspect(name, stepIndex),
      onStart: (states) => {
        this.states = states;
      },
    });
    const stopped = runId !== this.runId;
    const wallMs = performance.now() - started;
    const results = {};
    for (const [name, state] of Object.entries(states)) {
      const g = state.generation;
      const tokens = this.vocab.decode(g.ids);
      const n = state.steps.length;
      results[name] = {
        ids: [...g.ids],
        tokens,
        text: detokenize(tokens),
        ended_with_eos: g.endedWithEos,
        backend: this.models.runners[name]?.backend ?? null,
        ms_per_token: n ? state.totalMs / n : null,
        total_ms: state.totalMs,
        error: this.models.errors[name] ?? null,
      };
      showTiming(view.columns[name], { steps: n, totalMs: state.totalMs, endedWithEos: g.endedWithEos }, true);
    }
    const run = { prompt: text, options, preset, results, wall_ms: wallMs, stopped };
    // A run replaced by a newer one leaves the page to that one.
    if (this.disposed || this.activeRun !== runId) return run;
    this.busy = false;
    view.generateButton.disabled = !Object.keys(this.models.runners).length;
    view.stopButton.disabled = true;
    if (stopped) view.showMessage("Stopped.");
    this.lastRun = run;
    this.showSavedBoxes();
    return run;
  }

  // ------------------------------------------------------------ inspector

  closeInspector() {
    this.selected = null;
    this.view.inspector.hidden = true;
    this.view.inspector.replaceChildren();
    for (const b of this.root.querySelectorAll(".mha-token[aria-pressed]")) b.removeAttribute("aria-pressed");
  }

  // The chosen model's own step, and every other running model on the same window.
  async inspect(name, stepIndex) {
    const step = this.states[name]?.steps[stepIndex];
    if (!step) return;
    const col = this.view.columns[name];
    for (const b of this.root.querySelectorAll(".mha-token[aria-pressed]")) b.removeAttribute("aria-pressed");
    const button = col.live.querySelector(`.mha-token[data-step="${stepIndex}"]`);
    if (button) button.setAttribute("aria-pressed", "true");
    this.selected = { name, stepIndex };
    const outputs = {};
    await Promise.all(
      this.modelList.map(async ({ name: other }) => {
        if (other === name) outputs[other] = step.output;
        else if (this.models.runners[other]) {
          try {
            outputs[other] = await this.models.runners[other].run(step.window);
          } catch (err) {
            outputs[other] = { error: err.message };
          }
        }
      }),
    );
    if (!this.selected || this.selected.name !== name || this.selected.stepIndex !== stepIndex) return;
    const tokens = Number(this.view.tokens.value);
    const focus = this.focus ?? null;
    this.focus = null;
    openInspector(
      this.view.inspector,
      {
        name,
        label: col.label,
        stepIndex,
        step,
        outputs,
        words: this.windowWords(name, stepIndex),
        models: this.modelList,
        vocab: this.vocab,
        T: this.T,
        excluded: this.excluded,
        onClose: () => this.closeInspector(),
        // The head switches (head_toggles.js): re-run this step without some heads.
        extend: (section) => {
          this.headToggles = addHeadToggles(section, {
            window: step.window,
            outputs,
            models: this.modelList,
            runners: this.models.runners,
            vocab: this.vocab,
            T: this.T,
            excluded: this.excluded,
            focus,
            maxNewTokens: Number.isInteger(tokens) && tokens >= 1 && tokens <= this.limit ? tokens : this.defaultTokens,
            // "Continue" samples as this column did, from its sampler's state at this step.
            sampling: { ...this.states[name].generation.options, rngState: step.rngState },
          });
          return this.headToggles;
        },
      },
      button,
    );
  }

  // The words in the window of one step, slot by slot (null for padding).
  windowWords(name, stepIndex) {
    const ids = this.states[name].generation.ids.slice(0, stepIndex);
    const full = [...this.runWords, ...ids.map((id) => ({ text: tokenText(this.vocab, id), unknown: false }))];
    return contextWindow(full, this.T, null);
  }

  async dispose() {
    this.disposed = true;
    this.runId++;
    if (this.models) await this.models.close();
  }
}

// ---------------------------------------------------------------- widget API

export function mount(root) {
  const entry = claim(state, root);
  if (!entry) return state.get(root)?.widget.ready;
  for (const other of [...state.keys()]) if (other !== root) dispose(other);
  entry.widget = new CompareWidget(root);
  window.mhaCompare = makeHook(entry.widget);
  return entry.widget.ready;
}

export function dispose(root) {
  const entry = release(state, root);
  if (!entry) return undefined;
  if (window.mhaCompare) delete window.mhaCompare;
  return entry.widget.dispose();
}
