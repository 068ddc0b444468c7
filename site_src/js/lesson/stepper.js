// Page 4's forward-pass stepper: the learner's own prompt through the trained
// model, one operation of forward_full at a time. This module is the widget: it
// answers the learner's actions (open, next, back, append) and draws the current
// step into the view (stepper_view.js).
//
// Mounted on <div data-mha-widget="stepper" data-prompt="..." data-model="..." data-models="[[name, label], ...]">
// (data-models: the manifest's models with a teaching graph, most heads first, written by the build).
// Nothing heavy loads until the learner opens it (the button, or a link from
// the compare page's inspector: ?prompt=...&model=...#stepper). Then come the
// files (stepper_load.js), the run of the prompt through the teaching graph
// (stepper_run.js), and the steps that read it (stepper_steps.js).

import { el, panel } from "../runtime/dom.js";
import { claim, release } from "../runtime/widget.js";
import { serial } from "../runtime/ort.js";
import { detokenize } from "../runtime/tokenizer.js";
import { showListings } from "./stepper_listings.js";
import { createSession, failureText, loadBasics } from "./stepper_load.js";
import { StepperMap } from "./stepper_map.js";
import { MAX_PROMPT_CHARS, runPrompt } from "./stepper_run.js";
import { buildView } from "./stepper_view.js";

const state = new Map(); // root -> {saved, widget: Stepper}

class Stepper {
  constructor(root) {
    this.root = root;
    this.disposed = false;
    this.sessions = new Map(); // model name -> Promise<{ort, session}>
    this.index = 0;
    this.run = null;
    this.state = { revealed: false, picks: [] };
    const models = JSON.parse(root.dataset.models || "[]");
    this.defaultModel = root.dataset.model || (models.length ? models[0][0] : null);
    Object.assign(
      this,
      buildView(root, models, this.defaultModel, {
        open: () => this.open({}),
        move: (delta) => this.go_(delta),
        key: (e) => this.onKey(e),
      }),
    );
    this.modelMap = new StepperMap(this.map);
    // Colours follow the page's light/dark switch: redraw the step when it changes.
    this.schemeWatch = new MutationObserver(() => {
      if (this.run) this.render();
    });
    this.schemeWatch.observe(document.body, { attributes: true, attributeFilter: ["data-md-color-scheme"] });
    const params = new URLSearchParams(location.search);
    const asked = params.get("prompt");
    if (asked !== null) {
      this.input.value = asked.slice(0, MAX_PROMPT_CHARS);
      this.askedModel = params.get("model");
      this.open({ scroll: true });
    }
  }

  chosenModel() {
    const checked = this.modelBox.querySelector("input:checked");
    return checked ? checked.value : this.defaultModel;
  }

  // Vocabulary, manifest and code, once per page (again after a failure).
  basics() {
    if (!this.basicsPromise) {
      this.basicsPromise = loadBasics();
      this.basicsPromise.catch(() => {
        this.basicsPromise = null;
      });
    }
    return this.basicsPromise;
  }

  // One session per model, kept while the page lives (again after a failure).
  session(model) {
    if (!this.sessions.has(model.name)) {
      const promise = createSession(model, (p) => this.progress("the model's weights", p)).then(
        ({ ort, session, ms }) => {
          this.sessionMs = ms;
          return { ort, session };
        },
      );
      promise.catch(() => this.sessions.delete(model.name));
      this.sessions.set(model.name, promise);
    }
    return this.sessions.get(model.name);
  }

  progress(what, { loaded, total }) {
    if (this.run || !total) return;
    this.status.textContent = `Downloading ${what}: ${Math.round((100 * loaded) / total)} %`;
  }

  async open({ scroll = false } = {}) {
    const ticket = (this.ticket = (this.ticket || 0) + 1);
    this.go.disabled = true;
    this.problem.replaceChildren();
    this.status.textContent = "Starting the model…";
    try {
      const basics = await this.basics();
      if (this.askedModel) {
        // The compare page names a model; only one the manifest lists with a teaching graph is taken.
        const found = basics.models.find((m) => m.name === this.askedModel);
        const radio = found && this.modelBox.querySelector(`input[value="${found.name}"]`);
        if (radio) radio.checked = true;
        this.askedModel = null;
      }
      const model = basics.models.find((m) => m.name === this.chosenModel()) || basics.models[0];
      const run = await this.compute(basics, model, this.input.value);
      if (ticket !== this.ticket || this.disposed) return;
      const fresh = !this.run;
      this.run = run;
      this.state = { revealed: false, picks: new Array(run.H).fill(null), append: () => this.append() };
      if (fresh || this.index >= this.steps.length) this.index = 0;
      this.status.textContent = `${run.label}: ${run.n} tokens ran through the teaching graph in ${run.ms.toFixed(0)} ms. Step through it below.`;
      this.panel.hidden = false;
      this.render();
      if (scroll) this.root.scrollIntoView({ block: "start" });
      if (fresh) this.title.focus({ preventScroll: !scroll });
      this.resolveReady?.(run);
    } catch (err) {
      console.warn(err);
      if (ticket !== this.ticket) return;
      this.status.textContent = "";
      this.problem.replaceChildren(panel("error", "The stepper could not start.", failureText(err)));
      this.rejectReady?.(err);
    } finally {
      if (ticket === this.ticket) this.go.disabled = false;
    }
  }

  // The steps and the guess they ask for come with the first run: a reader who never opens
  // the stepper never downloads them.
  async compute(basics, model, text) {
    if (!this.steps) {
      const [table, predict] = await Promise.all([import("./stepper_steps.js"), import("./stepper_predict.js")]);
      this.steps = table.steps();
      this.showPredict = predict.showPredict;
    }
    return runPrompt(basics, await this.session(model), model, text, this.root);
  }

  async append() {
    const r = this.run;
    if (!r) return;
    const chosen = r.top[0];
    this.input.value = detokenize([...r.tokens, r.tokenText(chosen)]);
    const keep = this.index;
    await this.open({});
    this.index = keep;
    this.render();
    this.status.textContent = `Appended “${r.tokenText(chosen)}” and ran the model again: the new prediction is below.`;
  }

  go_(delta) {
    if (!this.run) return;
    const next = Math.max(0, Math.min(this.steps.length - 1, this.index + delta));
    if (next === this.index) return;
    this.index = next;
    this.render();
  }

  onKey(event) {
    const tag = event.target && event.target.tagName;
    if (["INPUT", "SELECT", "TEXTAREA"].includes(tag) || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === "ArrowRight") {
      event.preventDefault();
      this.go_(1);
    } else if (event.key === "ArrowLeft") {
      event.preventDefault();
      this.go_(-1);
    }
  }

  render() {
    const r = this.run;
    const step = this.steps[this.index];
    const hadFocus = this.panel.contains(document.activeElement);
    this.counter.textContent = `Step ${this.index + 1} of ${this.steps.length}`;
    this.title.textContent = step.title;
    this.back.disabled = this.index === 0;
    this.next.disabled = this.index === this.steps.length - 1;
    this.panel.dataset.step = step.key;
    this.shape.replaceChildren(
      el("span", { class: "mha-st__shape-label", text: "Shape " }),
      el("code", { text: step.shape(r) }),
    );
    this.picture.replaceChildren();
    this.predict.replaceChildren();
    this.actions.replaceChildren();
    const view = { picture: this.picture, actions: this.actions };
    const { sentence, numbers, alt } = step.draw(r, view, this.state);
    this.sentence.textContent = sentence;
    this.numbers.replaceChildren(
      ...numbers.map(([k, v]) =>
        el("div", { class: "mha-st__num" }, el("dt", { text: k }), el("dd", { text: String(v) })),
      ),
    );
    this.picture.setAttribute("aria-label", alt);
    this.picture.hidden = !this.picture.childNodes.length;
    if (step.predict) this.showPredict(this.predict, r, this.state, () => this.render());
    this.modelMap.show(step.map, r.H);
    showListings(this.code, step.code, r.code);
    // The focused control may have been redrawn away: keep the focus in the stepper, so the arrows keep working.
    if (hadFocus && !this.panel.contains(document.activeElement)) this.panel.focus({ preventScroll: true });
  }

  dispose() {
    this.disposed = true;
    this.ticket = (this.ticket || 0) + 1;
    this.schemeWatch.disconnect();
    for (const promise of this.sessions.values()) {
      promise
        .then(
          ({ session }) => serial(() => session.release()),
          () => {},
        )
        .catch(() => {});
    }
    this.sessions.clear();
  }
}

// ---------------------------------------------------------------- widget API

export function mount(root) {
  const entry = claim(state, root);
  if (!entry) return undefined;
  const widget = new Stepper(root);
  entry.widget = widget;
  // Test hook: the state of the (first) stepper and its tensors as the graph returned them.
  window.mhaStepper = {
    widget,
    ready: new Promise((resolve, reject) => {
      widget.resolveReady = resolve;
      widget.rejectReady = reject;
    }),
    state: () => ({
      index: widget.index,
      key: widget.steps?.[widget.index]?.key,
      steps: widget.steps?.length ?? 0,
      model: widget.run?.name,
      ids: widget.run ? [...widget.run.ids] : null,
      ms: widget.run?.ms,
      sessionMs: widget.sessionMs,
    }),
    tensors: () =>
      Object.fromEntries(
        Object.entries(widget.run?.tensors || {}).map(([k, t]) => [
          k,
          { dims: t.dims, data: Array.from(t.data, Number) },
        ]),
      ),
  };
  window.mhaStepper.ready.catch(() => {});
  return undefined;
}

export function dispose(root) {
  const widget = release(state, root)?.widget;
  if (widget) widget.dispose();
  if (window.mhaStepper && window.mhaStepper.widget === widget) delete window.mhaStepper;
}
