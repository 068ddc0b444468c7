// "Explore" on the microgpt page: what the trained model expects next after
// each prefix of a name (a bar chart of 27 probabilities) with a switch per
// head that knocks it out (model.js: headMask), beside the same model with its
// heads replaced by one head over all 16 numbers (the Watch toggle's probe);
// the prefixes of the names list where that matters most (where_heads_matter.js);
// a microgpt really trained with one head, compared (compare.js); and names
// sampled at a chosen temperature with a seed (Python's random.Random, bit for bit).
//
// Each chart carries data-setting and data-prefix, and data-probs: the shown
// probabilities as JSON, which the tests compare with the Python microgpt.

import { cellColours } from "../runtime/colormap.js";
import { comparePanel } from "./compare.js";
import { whenWanted } from "./python_first.js";
import { forwardAttention, sampleNames } from "./model.js";
import { el, loadModel, nameField, ONE_HEAD_PATH, START_LABEL, uid } from "./ui.js";
import { loadJSON } from "../runtime/assets.js";
import { HEADS_PATH, headsOff, whereHeadsMatter } from "./where_heads_matter.js";
import { claim, release } from "../runtime/widget.js";

const mounted = new Map();
const SAMPLE_COUNT = 10;

export function mount(root) {
  const state = claim(mounted, root);
  if (!state) return;
  root.replaceChildren(el("p", { class: "mgpt-loading", text: "Loading the trained model…" }));
  // Its charts and the comparison (~0.1 s of the page's thread) wait until the
  // exercise's Python is ready, or until the reader comes near (python_first.js).
  whenWanted(root)
    .then(loadModel)
    .then(
      (model) => {
        if (!state.disposed) build(root, model, state);
      },
      (err) => {
        root.replaceChildren(
          el("p", {
            class: "mha-panel mha-panel--error",
            role: "alert",
            text: `The trained model could not be loaded: ${err.message}`,
          }),
        );
      },
    );
}

function percent(p) {
  return p >= 0.995 ? "100%" : p >= 0.1 ? `${Math.round(p * 100)}%` : `${(p * 100).toFixed(1)}%`;
}

function build(root, model, state) {
  const symbols = [...model.uchars, "end"];
  let name = "emma";
  let prefixEnd = name.length;

  // Next-letter probabilities, with the heads as the switches say.
  const nHead = model.config.n_head;
  const headOn = Array.from({ length: nHead }, () => true);
  const field = nameField({
    label: "Name to type",
    value: name,
    uchars: model.uchars,
    onValid: (value) => {
      name = value;
      prefixEnd = value.length;
      render();
    },
  });
  const prefixLabel = uid("mgpt-prefix");
  const prefixes = el("div", { class: "mgpt-prefixes", role: "group", "aria-labelledby": prefixLabel });
  const switchLabel = uid("mgpt-heads");
  const switches = headOn.map((_, h) => {
    const button = el("button", {
      type: "button",
      class: "mgpt-chip mgpt-switch",
      "aria-pressed": "true",
      "data-head": String(h + 1),
      text: `Head ${h + 1}`,
    });
    button.addEventListener("click", () => {
      headOn[h] = !headOn[h];
      button.setAttribute("aria-pressed", String(headOn[h]));
      render();
    });
    return button;
  });
  const chartCaption = el("p", { class: "mgpt-bars__caption", "aria-live": "polite" });
  const headsChart = chartBox("heads");
  const probeChart = chartBox("probe");
  const whereBox = el(
    "div",
    { class: "mgpt-explore__where" },
    el("p", { class: "mgpt-loading", text: "Loading where the heads matter most…" }),
  );
  const nextPanel = el(
    "section",
    { class: "mgpt-explore__next" },
    el("h3", { text: "What comes next?" }),
    field.box,
    el("p", {
      id: prefixLabel,
      class: "mgpt-explore__hint",
      text: "Pick how much of the name the model has read so far:",
    }),
    prefixes,
    el("p", {
      id: switchLabel,
      class: "mgpt-explore__hint",
      text: "Switch a head off to knock it out (its 4 numbers become 0 before attn_wo):",
    }),
    el("div", { class: "mgpt-prefixes", role: "group", "aria-labelledby": switchLabel }, switches),
    chartCaption,
    el("div", { class: "mgpt-explore__charts" }, headsChart.box, probeChart.box),
    whereBox,
  );

  // A listed prefix: its name, that much of it read, and the heads that setting switches off.
  const pick = (entry, setting) => {
    name = entry.name;
    prefixEnd = entry.prefix.length;
    field.input.value = name;
    field.message.textContent = "";
    field.input.setAttribute("aria-invalid", "false");
    const off = headsOff(setting, nHead);
    switches.forEach((button, h) => {
      headOn[h] = !off.includes(h + 1);
      button.setAttribute("aria-pressed", String(headOn[h]));
    });
    render();
    headsChart.box.scrollIntoView({ block: "nearest" });
  };

  function render() {
    if (state.disposed) return;
    const off = headOn.map((on, h) => (on ? null : h + 1)).filter(Boolean);
    const masked = forwardAttention(model, name, nHead, off.length ? { headMask: headOn } : {});
    const probed = forwardAttention(model, name, nHead, { probe: true });
    prefixes.replaceChildren();
    for (let i = 0; i <= name.length; i++) {
      const text = i === 0 ? `${START_LABEL} (start)` : name.slice(0, i);
      const button = el("button", {
        type: "button",
        class: "mgpt-chip",
        "aria-pressed": String(i === prefixEnd),
        text,
      });
      button.addEventListener("click", () => {
        prefixEnd = i;
        render();
      });
      prefixes.append(button);
    }
    const seen = prefixEnd === 0 ? "nothing but the start marker" : `“${name.slice(0, prefixEnd)}”`;
    const headsTitle =
      off.length === 0
        ? `All ${nHead} heads`
        : off.length === nHead
          ? "Every head knocked out"
          : `Head${off.length > 1 ? "s" : ""} ${off.join(", ")} knocked out`;
    const topHeads = headsChart.draw(
      masked.probs[prefixEnd],
      headsTitle,
      off.length ? `without:${off.join(",")}` : "all",
    );
    const topProbe = probeChart.draw(
      probed.probs[prefixEnd],
      `Probe: 1 head × ${model.config.n_embd} numbers, same weights`,
      "probe",
    );
    for (const chart of [headsChart, probeChart]) chart.box.dataset.prefix = name.slice(0, prefixEnd);
    chartCaption.textContent = `After ${seen}. ${headsTitle}: ${topHeads}. The probe: ${topProbe}.`;
  }

  // One bar chart; draw() fills it and returns its top five in words.
  function chartBox(kind) {
    const title = el("p", { class: "mgpt-bars__title" });
    const chart = el("div", { class: "mgpt-bars", role: "img" });
    const box = el("figure", { class: "mgpt-bars__box", "data-chart": kind }, title, chart);
    const draw = (probs, heading, setting) => {
      const ranked = probs.map((p, i) => [p, symbols[i]]).sort((a, b) => b[0] - a[0]);
      const top = ranked
        .slice(0, 5)
        .map(([p, s]) => `${s === "end" ? "⏎" : s} ${percent(p)}`)
        .join(", ");
      title.textContent = heading;
      chart.setAttribute("aria-label", `${heading}: bar chart of the next-letter probabilities. Highest: ${top}.`);
      box.dataset.setting = setting;
      box.dataset.probs = JSON.stringify(probs);
      const biggest = ranked[0][0];
      chart.replaceChildren(
        ...probs.map((p, i) => {
          const { background } = cellColours(p / biggest);
          const bar = el("span", { class: "mgpt-bars__bar" });
          bar.style.height = `${Math.max(1, (p / biggest) * 100)}%`;
          bar.style.background = background;
          return el(
            "div",
            { class: "mgpt-bars__col", title: `${symbols[i]}: ${percent(p)}`, "aria-hidden": "true" },
            el("span", { class: "mgpt-bars__track" }, bar),
            el("span", { class: "mgpt-bars__label", text: symbols[i] === "end" ? "⏎" : symbols[i] }),
          );
        }),
      );
      return top;
    };
    return { box, draw };
  }

  // Sampling.
  const tempId = uid("mgpt-temp");
  const seedId = uid("mgpt-seed");
  const temp = el("input", { type: "range", id: tempId, min: "0.1", max: "2", step: "0.1", value: "0.5" });
  const tempOut = el("output", { for: tempId, text: "0.5" });
  // A text field, read as typed: a number field turns "1,5" into 15 and "0x10" into 10.
  const seed = el("input", {
    type: "text",
    id: seedId,
    value: "42",
    inputMode: "numeric",
    autocomplete: "off",
    spellcheck: "false",
    size: 12,
  });
  const sampleButton = el("button", {
    type: "button",
    class: "md-button md-button--primary",
    text: `Sample ${SAMPLE_COUNT} names`,
  });
  const sampleMessage = el("p", { class: "mgpt-explore__note", "aria-live": "polite" });
  const list = el("ol", { class: "mgpt-samples", "aria-live": "polite" });
  temp.addEventListener("input", () => {
    tempOut.textContent = Number(temp.value).toFixed(1);
  });
  const sample = () => {
    const text = seed.value.trim();
    const s = /^\d+$/.test(text) ? Number(text) : NaN; // digits only: Number() reads "0x10" as 16
    if (text === "" || !Number.isInteger(s) || s < 0 || s > 4294967295) {
      sampleMessage.textContent =
        text === ""
          ? "Type a seed first: a whole number from 0 to 4294967295."
          : "The seed must be a whole number from 0 to 4294967295.";
      sampleMessage.dataset.kind = "error";
      seed.setAttribute("aria-invalid", "true");
      return;
    }
    sampleMessage.dataset.kind = "info";
    seed.setAttribute("aria-invalid", "false");
    const t = Number(temp.value);
    const names = sampleNames(model, { n: SAMPLE_COUNT, temperature: t, seed: s });
    sampleMessage.textContent = `Temperature ${t.toFixed(1)}, seed ${s}: the same settings always give the same names.`;
    list.replaceChildren(...names.map((n) => el("li", { text: n || "(empty: it ended at once)" })));
    list.dataset.settings = `${t}:${s}`;
  };
  sampleButton.addEventListener("click", sample);
  seed.addEventListener("keydown", (event) => {
    if (event.key === "Enter") sample();
  });
  const samplePanel = el(
    "section",
    { class: "mgpt-explore__sample" },
    el("h3", { text: "Let it invent names" }),
    el(
      "div",
      { class: "mgpt-explore__settings" },
      el(
        "div",
        { class: "mgpt-field" },
        el("label", { for: tempId, text: "Temperature" }),
        el("div", { class: "mgpt-range" }, temp, tempOut),
        el("small", { text: "low: safe, common letters; high: adventurous" }),
      ),
      el(
        "div",
        { class: "mgpt-field" },
        el("label", { for: seedId, text: "Seed" }),
        seed,
        el("small", { text: "whole number; same seed, same names" }),
      ),
    ),
    sampleButton,
    sampleMessage,
    list,
    el("p", {
      class: "mgpt-explore__hint",
      text: `After training, microgpt itself wrote (temperature ${model.config.temperature}): ${model.samples.slice(0, 10).join(", ")}.`,
    }),
  );

  const compareBox = el(
    "div",
    { class: "mgpt-explore__compare" },
    el("p", { class: "mgpt-loading", text: "Loading the one-head microgpt…" }),
  );
  root.replaceChildren(el("div", { class: "mgpt-explore" }, nextPanel, samplePanel), compareBox);
  render();
  sample();
  const heads = loadJSON(HEADS_PATH);
  heads.then(
    (doc) => {
      if (!state.disposed) whereBox.replaceChildren(whereHeadsMatter(doc, pick));
    },
    (err) => {
      whereBox.replaceChildren(
        el("p", {
          class: "mha-panel mha-panel--error",
          role: "alert",
          text: `The measurements of where the heads matter could not be loaded: ${err.message}`,
        }),
      );
    },
  );
  Promise.all([loadModel(ONE_HEAD_PATH), heads.catch(() => null)]).then(
    ([one, measured]) => {
      if (!state.disposed) compareBox.replaceChildren(comparePanel(model, one, measured));
    },
    (err) => {
      compareBox.replaceChildren(
        el("p", {
          class: "mha-panel mha-panel--error",
          role: "alert",
          text: `The one-head microgpt could not be loaded: ${err.message}`,
        }),
      );
    },
  );
}

export function dispose(root) {
  release(mounted, root);
}
