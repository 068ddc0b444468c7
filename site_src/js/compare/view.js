// The compare page's layout: status line, messages, the form and one column
// per model. Only layout and message display live here; what the buttons do is
// passed in as callbacks by compare.js.

import { el, panel } from "../runtime/dom.js";
import { MAX_TEMPERATURE } from "./options.js";

const id = (s) => `mha-compare-${s}`;

export class CompareView {
  constructor(
    root,
    { preference, limit, onGenerate, onStop, onPreset, onSentence, onBackend, onPromptInput, onFieldChange },
  ) {
    this.root = root;
    this.notices = [];
    this.columns = {};
    this.status = el("div", { class: "mha-compare__status", role: "status", "aria-live": "polite" });
    this.progress = el("progress", {
      class: "mha-compare__progress",
      max: 100,
      value: 0,
      "aria-label": "Download progress",
    });
    this.statusText = el("span", { text: "Preparing the models…" });
    this.status.append(this.progress, this.statusText);
    this.alerts = el("div", { class: "mha-compare__alerts" });

    this.prompt = el("textarea", {
      id: id("prompt"),
      rows: 3,
      spellcheck: "false",
      autocomplete: "off",
      oninput: onPromptInput,
    });
    // Text fields read as typed (compare/options.js checks them): a number field
    // of the browser turns "1,5" into 15 and "0x10" into 10 before any check sees it.
    this.tokens = el("input", {
      id: id("tokens"),
      type: "text",
      inputmode: "numeric",
      autocomplete: "off",
      spellcheck: "false",
      size: 8,
    });
    this.temperature = el("input", {
      id: id("temperature"),
      type: "text",
      value: 0,
      inputmode: "decimal",
      autocomplete: "off",
      spellcheck: "false",
      size: 8,
    });
    this.seed = el("input", {
      id: id("seed"),
      type: "text",
      value: 0,
      inputmode: "numeric",
      autocomplete: "off",
      spellcheck: "false",
      size: 12,
    });
    this.backendSelect = el(
      "select",
      { id: id("backend"), onchange: () => onBackend(this.backendSelect.value) },
      el("option", { value: "auto", text: "Auto" }),
      el("option", { value: "wasm", text: "WebAssembly" }),
      el("option", { value: "webgpu", text: "WebGPU" }),
    );
    this.backendSelect.value = preference;
    this.generateButton = el("button", {
      type: "submit",
      class: "md-button md-button--primary",
      disabled: true,
      text: "Generate",
    });
    this.stopButton = el("button", {
      type: "button",
      class: "md-button",
      disabled: true,
      text: "Stop",
      onclick: onStop,
    });
    this.presetButton = el("button", {
      type: "button",
      class: "md-button",
      text: "Use the held-out preset",
      onclick: onPreset,
    });
    // The lesson's running sentence (the home page, pages 1 and 5), given by the page at build time.
    this.sentenceButton = el("button", {
      type: "button",
      class: "md-button",
      text: "Use the lesson's sentence",
      onclick: onSentence,
      hidden: !root.dataset.runningSentence,
    });
    this.promptInfo = el("p", { class: "mha-compare__prompt-info", id: id("prompt-info"), "aria-live": "polite" });
    this.prompt.setAttribute("aria-describedby", id("prompt-info"));
    // Each number field: a hint, and a message that appears under it when
    // what was typed cannot be used (both read out with the field).
    this.fieldMessages = {};
    const field = (key, label, input, hint) => {
      const hintNode = hint ? el("small", { id: id(`${key}-hint`), text: hint }) : null;
      const message = el("p", { class: "mha-compare__field-msg", id: id(`${key}-msg`), hidden: true });
      if (key !== "prompt" && key !== "backend") {
        this.fieldMessages[key] = { input, message, label };
        input.setAttribute(
          "aria-describedby",
          [hintNode ? id(`${key}-hint`) : null, id(`${key}-msg`)].filter(Boolean).join(" "),
        );
        input.addEventListener("change", () => onFieldChange(key, false));
        // While typing, a message only goes away (it never appears mid-word).
        input.addEventListener("input", () => {
          if (input.getAttribute("aria-invalid") === "true") onFieldChange(key, true);
        });
      }
      return el(
        "div",
        { class: "mha-compare__field" },
        el("label", { for: input.id, text: label }),
        input,
        hintNode,
        key in this.fieldMessages ? message : null,
      );
    };
    this.tokensField = field("tokens", "New tokens", this.tokens, limit ? `1 to ${limit}` : "a whole number"); // setLimit: the manifest's

    this.form = el(
      "form",
      {
        class: "mha-compare__form",
        novalidate: true,
        onsubmit: (e) => {
          e.preventDefault();
          onGenerate();
        },
      },
      field("prompt", "Opening", this.prompt),
      this.promptInfo,
      el(
        "div",
        { class: "mha-compare__settings" },
        this.tokensField,
        field("temperature", "Temperature", this.temperature, `0 = greedy, at most ${MAX_TEMPERATURE}`),
        field("seed", "Seed", this.seed, "for temperature above 0"),
        field("backend", "Backend", this.backendSelect),
      ),
      el(
        "div",
        { class: "mha-compare__buttons" },
        this.generateButton,
        this.stopButton,
        this.presetButton,
        this.sentenceButton,
      ),
    );
    this.notice = el("div", { class: "mha-compare__notice", "aria-live": "polite" });
    this.message = el("div", { class: "mha-compare__message", "aria-live": "polite" });
    this.grid = el("div", { class: "mha-compare__columns" });
    this.inspector = el("section", {
      class: "mha-compare__inspector",
      "aria-labelledby": id("inspector-title"),
      hidden: true,
    });
    root.replaceChildren(this.status, this.alerts, this.form, this.notice, this.message, this.grid, this.inspector);
  }

  // One column per model of the manifest, in its order.
  buildColumns(models) {
    this.columns = {};
    this.grid.replaceChildren();
    for (const { name, label } of models) {
      const col = {
        name,
        label,
        heading: el("h2", { class: "mha-col__name", text: label }),
        facts: el("p", { class: "mha-col__facts" }),
        backend: el("p", { class: "mha-col__backend", text: "Backend: starting…" }),
        progress: el("progress", { max: 100, value: 0, "aria-label": `${label} download` }),
        problem: el("div", { class: "mha-col__problem" }),
        live: el(
          "div",
          { class: "mha-col__live", role: "group", "aria-label": `${label} continuation` },
          el("p", { class: "mha-col__placeholder", text: "Press Generate to run this model here." }),
        ),
        timing: el("p", { class: "mha-col__timing" }),
        saved: el("div", { class: "mha-col__saved" }),
      };
      col.node = el(
        "section",
        { class: "mha-col", "data-model": name, "aria-label": label },
        col.heading,
        col.facts,
        col.backend,
        col.progress,
        col.problem,
        el("h3", { class: "mha-col__label", text: "Live, on this device" }),
        col.live,
        col.timing,
        col.saved,
      );
      this.columns[name] = col;
      this.grid.append(col.node);
    }
    return this.columns;
  }

  fieldLabel(key) {
    return this.fieldMessages[key]?.label ?? key;
  }

  // The most new tokens a run may ask for (the manifest's limit).
  setLimit(limit) {
    this.tokens.max = String(limit);
    const hint = this.tokensField.querySelector("small");
    if (hint) hint.textContent = `1 to ${limit}`;
  }

  // Shows each field's problem under it (or clears it); returns the first bad field.
  showFieldProblems(problems, only = null, clearOnly = false) {
    let first = null;
    for (const [key, { input, message }] of Object.entries(this.fieldMessages)) {
      if (only && key !== only) continue;
      const text = problems[key] || "";
      if (clearOnly && text) continue;
      message.textContent = text;
      message.hidden = !text;
      if (text) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
      if (text && !first) first = input;
    }
    return first;
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

  clearNotices() {
    this.failed = false;
    this.notices = [];
    this.notice.replaceChildren();
    this.alerts.replaceChildren();
  }

  showMessage(text, kind = "info") {
    this.message.replaceChildren(text ? el("p", { class: `mha-panel mha-panel--${kind}`, text }) : "");
  }

  // Nothing can run: one alert, and every control that needs the models off.
  fail(title, message) {
    this.failed = true;
    this.alerts.append(panel("error", title, message));
    this.setStatus(title, 0);
    this.progress.hidden = true;
    this.generateButton.disabled = true;
    for (const col of Object.values(this.columns)) {
      col.progress.hidden = true;
      col.backend.textContent = "Backend: not started";
    }
  }

  columnProblem(name, message) {
    const col = this.columns[name];
    if (!col) return;
    col.progress.hidden = true;
    col.backend.textContent = "Backend: not running";
    col.problem.replaceChildren(panel("error", "Not available.", message));
  }

  offerReload(onReload) {
    const button = el("button", { type: "button", class: "md-button", text: "Reload with WebGPU", onclick: onReload });
    this.alerts.replaceChildren(
      panel(
        "notice",
        "WebGPU needs a reload.",
        "This page already started the WebAssembly-only runtime; reload to switch to WebGPU. Until then the models keep running on WebAssembly.",
        button,
      ),
    );
  }
}
