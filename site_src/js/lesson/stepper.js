// Page 4's forward-pass stepper: the learner's own prompt through the trained
// model, one operation of forward_full at a time.
//
// Mounted on <div data-mha-widget="stepper" data-prompt="..." data-model="..." data-models="[[name, label], ...]">
// (data-models: the manifest's models with a teaching graph, most heads first, written by the build).
// Nothing heavy loads until the learner opens it (the button, or a link from
// the compare page's inspector: ?prompt=...&model=...#stepper). Then:
//   * the vocabulary, the manifest and the code sections (stepper_code.json,
//     written at build time by site_src/hooks/stepper_code.py);
//   * onnxruntime (runtime/ort.js) and the model's teaching graph
//     (models/<name>.steps.onnx, export/teaching_graph.py): forward_full with
//     every intermediate tensor as an output. It stores no weights of its own:
//     they are read, as ONNX external data, from the shipped model file's
//     bytes, which are downloaded once (runtime/assets.js caches them) and also
//     serve the compare page.
// Every number shown is an output of that graph (see stepper_steps.js); the
// page only tokenizes, as the compare page does, and takes the softmax of the
// logits to show probabilities, as the generator does.

import { AssetError, describeFile, loadBytes, loadJSON } from "../runtime/assets.js";
import { el, panel, uid } from "../runtime/dom.js";
import { claim, errorText, release } from "../runtime/widget.js";
import { contextLength, contextWindow, dropped } from "../runtime/context.js";
import { probabilities, promptHistory, topK } from "../runtime/generate.js";
import { loadOrt, serial } from "../runtime/ort.js";
import { Vocabulary, detokenize, tokenize } from "../runtime/tokenizer.js";

const DEFAULT_PROMPT = "Lily found a";
const MAX_PROMPT_CHARS = 2000;
const CODE_FILE = "js/lesson/stepper_code.json";
const STAGE_LANE = ["scores", "mask", "A", "AV"]; // the per-head lane boxes of the model map, in order
// How tall the map's band above the step is at least, in the map's own units, with a margin
// around this step's boxes.
const MAP_BAND = 150;
const MAP_MARGIN = 24;

// An element's box in the map's viewBox units, through any transforms of the groups around it.
function boxInMap(svg, node) {
  const b = node.getBBox();
  const toMap = svg.getScreenCTM()?.inverse().multiply(node.getScreenCTM());
  if (!toMap) return { y: 0, height: 0 };
  const ys = [
    [b.x, b.y],
    [b.x + b.width, b.y + b.height],
  ].map(([x, y]) => new DOMPoint(x, y).matrixTransform(toMap).y);
  return { y: Math.min(...ys), height: Math.abs(ys[1] - ys[0]) };
}

const state = new Map(); // root -> {saved, widget: Stepper}

function tokenText(vocab, id) {
  const s = vocab.special;
  if (id === s.BOS) return "BOS";
  if (id === s.EOS) return "[end]";
  if (id === s.UNK) return "UNK";
  if (id === s.PAD) return "PAD";
  return vocab.itos[id];
}

// What the learner can act on when a file fails: said once, in words.
function failureText(err) {
  if (err instanceof AssetError) {
    // The loaders' own advice where they give one (offline, a new build, a damaged download).
    const advice = err.advice
      ? String(err.advice).replace(/\.?$/, ".")
      : "Reload the page, and if it keeps failing, tell the site's maintainer.";
    return `${String(err.message).replace(/\.$/, "")}. ${advice} The rest of the page works without it.`;
  }
  return `The stepper could not run the model (${errorText(err)}). The rest of the page works without it; reload the page to try again.`;
}

class Stepper {
  constructor(root) {
    this.root = root;
    this.disposed = false;
    this.sessions = new Map(); // model name -> Promise<InferenceSession>
    this.index = 0;
    this.run = null;
    this.state = { revealed: false, picks: [] };
    this.build();
    const params = new URLSearchParams(location.search);
    const asked = params.get("prompt");
    if (asked !== null) {
      this.input.value = asked.slice(0, MAX_PROMPT_CHARS);
      this.askedModel = params.get("model");
      this.open({ scroll: true });
    }
  }

  build() {
    const id = uid("mha-st");
    const prompt = this.root.dataset.prompt || DEFAULT_PROMPT;
    this.input = el("input", {
      id: `${id}-prompt`,
      class: "mha-st__input",
      type: "text",
      value: prompt,
      maxlength: MAX_PROMPT_CHARS,
      spellcheck: false,
      autocomplete: "off",
    });
    this.modelBox = el("fieldset", { class: "mha-st__models" }, el("legend", { text: "Model" }));
    const models = JSON.parse(this.root.dataset.models || "[]");
    this.defaultModel = this.root.dataset.model || (models.length ? models[0][0] : null);
    for (const [name, label] of models) {
      const rid = `${id}-${name}`;
      this.modelBox.append(
        el(
          "span",
          { class: "mha-st__model" },
          el("input", {
            type: "radio",
            name: `${id}-model`,
            id: rid,
            value: name,
            checked: name === this.defaultModel,
          }),
          el("label", { for: rid, text: label }),
        ),
      );
    }
    this.go = el("button", { type: "submit", class: "md-button md-button--primary", text: "Step through it" });
    const form = el(
      "form",
      {
        class: "mha-st__form",
        onsubmit: (e) => {
          e.preventDefault();
          this.open({});
        },
      },
      el("label", { for: this.input.id, text: "Your prompt" }),
      this.input,
      this.modelBox,
      this.go,
    );
    this.status = el("p", { class: "mha-st__status", role: "status", "aria-live": "polite" });
    this.problem = el("div", { class: "mha-st__problem" });
    this.title = el("h3", { class: "mha-st__title", tabindex: "-1", id: `${id}-title` });
    this.back = el("button", { type: "button", class: "md-button", text: "← Back", onclick: () => this.go_(-1) });
    this.next = el("button", {
      type: "button",
      class: "md-button md-button--primary",
      text: "Next →",
      onclick: () => this.go_(1),
    });
    this.counter = el("span", { class: "mha-st__counter" });
    this.map = el("div", { class: "mha-st__map", "aria-hidden": "true" });
    this.shape = el("p", { class: "mha-st__shape" });
    this.sentence = el("p", { class: "mha-st__sentence", "aria-live": "polite" });
    this.numbers = el("dl", { class: "mha-st__numbers" });
    this.predict = el("div", { class: "mha-st__predict" });
    this.picture = el("figure", { class: "mha-st__picture", role: "img" });
    this.actions = el("div", { class: "mha-st__actions" });
    this.code = el("div", { class: "mha-st__code" });
    this.panel = el(
      "section",
      {
        class: "mha-st__panel",
        hidden: true,
        tabindex: "0",
        "aria-labelledby": this.title.id,
        onkeydown: (e) => this.onKey(e),
      },
      el("div", { class: "mha-st__nav" }, this.back, this.counter, this.next),
      this.title,
      el(
        "div",
        { class: "mha-st__body" },
        this.map,
        el(
          "div",
          { class: "mha-st__main" },
          this.shape,
          this.sentence,
          this.numbers,
          this.predict,
          this.picture,
          this.actions,
          this.code,
        ),
      ),
      el("p", { class: "mha-st__keys", text: "Keys: ← and → move between the steps while the stepper has the focus." }),
    );
    this.root.replaceChildren(el("div", { class: "mha-st" }, form, this.status, this.problem, this.panel));
    // Colours follow the page's light/dark switch: redraw the step when it changes.
    this.schemeWatch = new MutationObserver(() => {
      if (this.run) this.render();
    });
    this.schemeWatch.observe(document.body, { attributes: true, attributeFilter: ["data-md-color-scheme"] });
  }

  chosenModel() {
    const checked = this.modelBox.querySelector("input:checked");
    return checked ? checked.value : this.defaultModel;
  }

  // Vocabulary, manifest and code, once per page.
  basics() {
    if (!this.basicsPromise) {
      this.basicsPromise = Promise.all([
        loadJSON("wasm_assets/vocab.json"),
        loadJSON("wasm_assets/models/manifest.json"),
        loadJSON(CODE_FILE),
      ]).then(([vocab, manifest, code]) => {
        const models = manifest.models.filter((m) => m.steps && m.heads > 0);
        if (!models.length)
          throw new AssetError(
            `${describeFile("wasm_assets/models/manifest.json")} lists no teaching graph (run \`python -m export steps\`)`,
            { kind: "corrupt" },
          );
        // The ids generation never picks come from the pipeline (the manifest), as on the compare page.
        const excluded = manifest.generation && manifest.generation.excluded_ids;
        if (!Array.isArray(excluded))
          throw new AssetError(
            `${describeFile("wasm_assets/models/manifest.json")} does not say which ids generation never picks (generation.excluded_ids)`,
            { kind: "corrupt" },
          );
        return {
          vocab: new Vocabulary(vocab),
          T: contextLength(manifest, vocab),
          models,
          code: code.sections || {},
          excluded,
        };
      });
      this.basicsPromise.catch(() => {
        this.basicsPromise = null;
      });
    }
    return this.basicsPromise;
  }

  session(model) {
    if (!this.sessions.has(model.name)) {
      const promise = (async () => {
        const [ort, weights, graph] = await Promise.all([
          loadOrt("wasm"),
          loadBytes(`wasm_assets/${model.file}`, {
            bytes: model.bytes,
            sha256: model.sha256,
            onProgress: (p) => this.progress("the model's weights", p),
          }),
          loadBytes(`wasm_assets/${model.steps.file}`, { bytes: model.steps.bytes, sha256: model.steps.sha256 }),
        ]);
        const t0 = performance.now();
        const session = await serial(() =>
          ort.InferenceSession.create(graph.slice(), {
            executionProviders: ["wasm"],
            graphOptimizationLevel: "all",
            logSeverityLevel: 3,
            // The teaching graph names the shipped file as the home of its weights;
            // the same downloaded bytes are handed over, whatever URL they came from.
            externalData: [{ path: model.steps.external_path, data: weights }],
            extra: { session: { disable_quant_qdq: "1" } },
          }),
        );
        this.sessionMs = performance.now() - t0;
        return { ort, session };
      })();
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

  async compute(basics, model, text) {
    if (!this.steps) {
      const mod = await import("./stepper_steps.js");
      this.steps = mod.steps();
      this.stepsModule = mod;
    }
    const { vocab, code, T } = basics;
    const { ort, session } = await this.session(model);
    text = String(text).slice(0, MAX_PROMPT_CHARS);
    const history = promptHistory(vocab, text);
    const tokens = tokenize(text);
    const ids = contextWindow(history, T, vocab.special.PAD);
    const feed = new BigInt64Array(T);
    ids.forEach((id, i) => {
      feed[i] = BigInt(id);
    });
    const t0 = performance.now();
    const out = await serial(() => session.run({ ids: new ort.Tensor("int64", feed, [1, T]) }));
    const ms = performance.now() - t0;
    const tensors = {};
    for (const [name, tensor] of Object.entries(out))
      tensors[name] = { dims: tensor.dims.map(Number), data: tensor.data };
    // The words of each slot as the learner typed them (an unknown word keeps its spelling).
    const words = [{ text: "BOS", unknown: false }, ...tokens.map((t) => ({ text: t, unknown: !vocab.stoi.has(t) }))];
    const slotWords = contextWindow(words, T, null);
    const real = [];
    ids.forEach((id, s) => {
      if (id !== vocab.special.PAD) real.push(s);
    });
    const H = model.heads;
    const d = tensors.E.dims[2];
    const dh = tensors.Q.dims[3];
    const at4 = (name) => {
      const { data } = tensors[name];
      const [, , b, c] = tensors[name].dims;
      return (i, j, k) => data[(i * b + j) * c + k];
    };
    const at3 = (name) => {
      const { data } = tensors[name];
      const c = tensors[name].dims[2];
      return (j, k) => data[j * c + k];
    };
    const mask = tensors.mask.data;
    const logits = tensors.logits.data;
    const excluded = basics.excluded;
    const probs = probabilities(logits, excluded);
    return {
      label: model.label,
      name: model.name,
      ms,
      text,
      tokens,
      ids,
      words: slotWords,
      real,
      n: real.length,
      T,
      C: vocab.C,
      H,
      d,
      dh,
      hidden: tensors.hidden.dims[1],
      final: T - 1,
      special: vocab.special,
      dropped: dropped(history, T),
      labels: real.map((s) => (slotWords[s] ? slotWords[s].text : tokenText(vocab, ids[s]))),
      tensors,
      logits,
      probs,
      top: topK(probs, 5),
      excluded,
      code,
      host: this.root,
      tokenText: (id) => tokenText(vocab, id),
      t: {
        token_rows: at3("token_rows"),
        position_rows: at3("position_rows"),
        E: at3("E"),
        joined: at3("joined"),
        update: at3("update"),
        updated: at3("updated"),
        Q: at4("Q"),
        K: at4("K"),
        V: at4("V"),
        scores: at4("scores"),
        A: at4("A"),
        messages: at4("messages"),
        head_parts: at4("head_parts"),
        wo_bias: (i) => tensors.wo_bias.data[i],
        mask: (a, b) => Boolean(mask[a * T + b]),
        hidden: (i) => tensors.hidden.data[i],
      },
    };
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
    if (step.predict) this.drawPredict(r);
    this.drawMap(step.map, r.H);
    this.drawCode(step.code, r.code);
    // The focused control may have been redrawn away: keep the focus in the stepper, so the arrows keep working.
    if (hadFocus && !this.panel.contains(document.activeElement)) this.panel.focus({ preventScroll: true });
  }

  // Predict, then reveal: one guess per head of the source it weighs most at the final slot.
  drawPredict(r) {
    const { heaviest, f2 } = this.stepsModule;
    const box = el("div", { class: "mha-st__guess" });
    const selects = [];
    for (let h = 0; h < r.H; h++) {
      const sid = uid("mha-st-pick");
      const select = el(
        "select",
        {
          id: sid,
          disabled: this.state.revealed,
          onchange: () => {
            this.state.picks[h] = select.value === "" ? null : Number(select.value);
          },
        },
        el("option", { value: "", text: "choose a source" }),
        r.labels.map((label, i) =>
          el("option", { value: String(i), text: `${label} (slot ${r.real[i]})`, selected: this.state.picks[h] === i }),
        ),
      );
      selects.push(select);
      box.append(
        el(
          "span",
          { class: `mha-st__pick mha-st__pick--h${h}` },
          el("label", { for: sid, text: r.H === 1 ? "The head weighs most" : `Head ${h + 1} weighs most` }),
          select,
        ),
      );
    }
    if (!this.state.revealed) {
      const reveal = el("button", {
        type: "button",
        class: "md-button md-button--primary",
        text: "Reveal the weights",
        onclick: () => {
          this.state.revealed = true;
          this.render();
          this.predict.querySelector(".mha-st__verdicts")?.focus();
        },
      });
      box.append(reveal);
      this.predict.append(
        el("p", { class: "mha-st__ask", text: "Your guess (the last row of A, at the final slot):" }),
        box,
      );
      return;
    }
    const verdicts = el("ul", { class: "mha-st__verdicts", tabindex: "-1" });
    for (let h = 0; h < r.H; h++) {
      const top = heaviest(r, h);
      const pick = this.state.picks[h];
      const who = r.H === 1 ? "The head" : `Head ${h + 1}`;
      let text;
      if (pick === null) text = `${who}: no guess; it weighs “${top.label}” most (${f2(top.w)}).`;
      else if (pick === top.index) text = `${who}: right, “${top.label}” gets the most weight (${f2(top.w)}).`;
      else {
        const w = r.t.A(h, r.final, r.real[pick]);
        // the gap of the two shown (rounded) weights, so the sentence adds up as printed
        const gap = (Math.round(top.w * 100) - Math.round(w * 100)) / 100;
        text = `${who}: you picked “${r.labels[pick]}”, which gets ${f2(w)}; the heaviest is “${top.label}” with ${f2(top.w)} (${f2(gap)} more).`;
      }
      const kind = pick === null ? "none" : pick === top.index ? "right" : "wrong";
      verdicts.append(
        el("li", {
          class: `mha-st__verdict mha-st__verdict--${kind}`,
          "data-head": String(h),
          "data-verdict": kind,
          text,
        }),
      );
    }
    this.predict.append(box, verdicts);
  }

  // The page's own model map (::figure:: model-map), copied without its ids
  // and links, with this step's boxes marked.
  drawMap(keys, heads) {
    const source = document.querySelector("#fig-model-map svg");
    if (!source) {
      this.map.hidden = true;
      return;
    }
    if (!this.mapSvg) {
      const svg = source.cloneNode(true);
      for (const a of svg.querySelectorAll("a")) {
        const key = (a.id || "").replace(/^map-/, "");
        if (key) a.dataset.key = key;
        a.removeAttribute("id");
        a.setAttribute("tabindex", "-1");
        a.removeAttribute("href");
        a.removeAttributeNS("http://www.w3.org/1999/xlink", "href");
      }
      svg.querySelectorAll("[id]").forEach((node) => node.removeAttribute("id"));
      svg.querySelectorAll("title, desc").forEach((node) => node.remove());
      svg.querySelectorAll(".mha-lane").forEach((lane) => {
        lane.querySelectorAll("a").forEach((a, k) => {
          a.dataset.key = STAGE_LANE[k];
        });
      });
      svg.removeAttribute("aria-labelledby");
      svg.removeAttribute("width"); // its shape then follows the viewBox, which frameMap() may crop
      svg.removeAttribute("height");
      svg.setAttribute("aria-hidden", "true");
      svg.setAttribute("focusable", "false");
      this.mapSvg = svg;
      this.map.replaceChildren(svg);
    }
    for (const a of this.mapSvg.querySelectorAll("a[data-key]")) {
      const lane = a.closest(".mha-lane");
      const inLane = !lane || Number(lane.dataset.head) < heads;
      a.classList.toggle("mha-fig__link--here", keys.includes(a.dataset.key) && inLane);
    }
    this.mapSvg
      .querySelectorAll(".mha-lane")
      .forEach((lane) => lane.classList.toggle("mha-st__lane--off", Number(lane.dataset.head) >= heads));
    this.frameMap();
  }

  // The whole map, small enough to sit beside the step, would be a thumbnail of 5 px text, so it
  // sits above the step, wide enough to read (stepper.css), and shows only the band of rows
  // around this step's boxes.
  frameMap() {
    const svg = this.mapSvg;
    if (!svg) return;
    if (!this.wholeView) this.wholeView = svg.getAttribute("viewBox");
    const [x0, y0, width, height] = this.wholeView.split(/[\s,]+/).map(Number);
    let view = this.wholeView;
    const boxes = [...svg.querySelectorAll(".mha-fig__link--here")]
      .map((a) => boxInMap(svg, a))
      .filter((b) => b.height > 0);
    if (boxes.length) {
      const top = Math.min(...boxes.map((b) => b.y));
      const bottom = Math.max(...boxes.map((b) => b.y + b.height));
      const band = Math.min(height, Math.max(MAP_BAND, bottom - top + 2 * MAP_MARGIN));
      const y = Math.max(y0, Math.min(y0 + height - band, (top + bottom) / 2 - band / 2));
      view = `${x0} ${y.toFixed(1)} ${width} ${band.toFixed(1)}`;
    }
    svg.setAttribute("viewBox", view);
    this.map.classList.toggle("mha-st__map--band", view !== this.wholeView);
    // A label the band cuts through would show as half a line of text: only whole ones show.
    const [, top, , band] = view.split(/[\s,]+/).map(Number);
    for (const t of svg.querySelectorAll("text")) {
      const b = view === this.wholeView ? null : boxInMap(svg, t);
      t.style.visibility = !b || (b.y >= top - 0.5 && b.y + b.height <= top + band + 0.5) ? "" : "hidden";
    }
  }

  drawCode(names, sections) {
    this.code.replaceChildren();
    for (const name of names) {
      const s = sections[name];
      if (!s) {
        this.code.append(
          el("p", { class: "mha-st__missing", text: `(The code section ${name} is missing from this build.)` }),
        );
        continue;
      }
      const lines = s.end - s.start + 1;
      const numbers = Array.from({ length: lines }, (_, i) => String(s.start + i)).join("\n");
      const pre = el("pre", { class: "mha-st__pre" }, el("code", {}));
      pre.firstChild.innerHTML = s.html; // highlighted at build time from the project's own file
      this.code.append(
        el(
          "div",
          { class: "mha-st__listing", "data-section": name },
          el("p", {
            class: "mha-code__source",
            text: `${lines === 1 ? "Line" : "Lines"} ${s.start}${lines === 1 ? "" : `–${s.end}`} of ${s.path}`,
          }),
          el(
            "div",
            {
              class: "highlight mha-st__codebox",
              tabindex: "0",
              role: "region",
              "aria-label": `Code: ${s.path}, lines ${s.start} to ${s.end}`,
            },
            el("pre", { class: "mha-st__ln", "aria-hidden": "true", text: numbers }),
            pre,
          ),
        ),
      );
    }
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
