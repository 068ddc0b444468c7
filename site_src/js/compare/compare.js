// The "Compare their stories" widget: the models of the manifest continue the
// same opening side by side, in this browser.
//
// mount(root) builds the UI inside root (user text only ever goes through
// textContent); dispose() stops generation, releases the sessions and removes
// the test hook window.mhaCompare. The parts, one job each:
//   settings.js    what the page takes from the manifest
//   view.js        layout, status line and messages
//   opening.js     what the models read of the opening
//   preferences.js the learner's backend choice
//   models.js      downloads, sessions, WebGPU fallback
//   generation.js  a run on the page (runtime/generate.js's Generation per model)
//   columns.js     what a column shows
//   inspector.js   the token inspector
//   hook.js        window.mhaCompare

import { loadJSON } from "../runtime/assets.js";
import { promptHistory } from "../runtime/generate.js";
import { loadOrt, loadedBuild, resolveBackend, supportProblem, runningThreads } from "../runtime/ort.js";
import { MISMATCH_ADVICE, MISMATCH_TITLE, manifestMismatch } from "../runtime/manifest_check.js";
import { Vocabulary } from "../runtime/tokenizer.js";
import { reproduces, showFacts, showPrompt, showSaved } from "./columns.js";
import { claim, release } from "../runtime/widget.js";
import { finishColumns, generateColumns, outputsForStep } from "./generation.js";
import { addHeadToggles, inspectRequest } from "./head_toggles.js";
import { makeHook } from "./hook.js";
import { openInspector } from "./inspector.js";
import { ModelSet } from "./models.js";
import { describeOpening, readOpening, stepWords } from "./opening.js";
import { parseOptions } from "./options.js";
import { readPreference, savePreference } from "./preferences.js";
import { readSettings } from "./settings.js";
import { CompareView } from "./view.js";

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
    const mismatch = manifestMismatch(manifest, this.vocab);
    if (mismatch) {
      view.fail(MISMATCH_TITLE, `${mismatch}. ${MISMATCH_ADVICE}`);
      return this.readyState();
    }
    const { T, limit, minTemperature, excluded, preset, models } = readSettings(manifest, this.vocab);
    Object.assign(this, { T, limit, minTemperature, excluded, manifestPreset: preset, modelList: models });
    view.setLimit(this.limit);
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

  fillFacts() {
    for (const m of this.modelList) showFacts(this.view.columns[m.name], m, this.evidence, this.presetSeed);
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
      const state = saved && match === null ? reproduces(run.results[m.name], saved) : match;
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
    this.view.promptInfo.textContent = describeOpening(this.view.prompt.value, this.vocab, this.T);
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
    const { text, tokens: promptTokens, notes, words } = readOpening(view.prompt.value, this.vocab, this.T);
    view.showMessage(notes.join(" "));
    const preset = this.isPresetRun(text, options);
    this.runWords = words;
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
    const results = finishColumns(states, { models: this.models, view, vocab: this.vocab });
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
    const outputs = await outputsForStep(this.modelList, this.models.runners, name, step);
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
        words: stepWords(this.runWords, this.states[name].generation.ids.slice(0, stepIndex), this.vocab, this.T),
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
