// The home page's first screen, made live: the trained four-head model reads
// the learner's sentence in this browser, and each head can be switched off.
//
// The build drew the same figure for the lesson's running sentence
// (site_src/hooks/page_macros/running.py), so seeing it downloads nothing.
// The button says what going live downloads (computed at build time); it
// loads the model, the vocabulary and onnxruntime's WebAssembly build through
// the compare page's runtime, and then every keystroke or switch re-runs the
// model. A switched-off head gets 0 in the model's head_mask input: its
// message is left out before W_O; its weights are still computed, so the
// table keeps them and marks the row "off".

import { loadBytes, loadJSON } from "../runtime/assets.js";
import { el, uid } from "../runtime/dom.js";
import { contextLength, contextWindow, lastT } from "../runtime/context.js";
import { checkManifest } from "../runtime/manifest_check.js";
import { headColourVar } from "../runtime/palette.js";
import { probabilities, promptHistory, topK } from "../runtime/generate.js";
import { ModelRunner, loadOrt, onEngineProgress, supportProblem } from "../runtime/ort.js";
import { Vocabulary, tokenize } from "../runtime/tokenizer.js";
import { claim, release } from "../runtime/widget.js";
import { formatBytes, learnerMessage, tokenText } from "../compare/format.js";
import { maskLabel } from "../compare/head_toggles.js";

const state = new Map(); // root -> {saved, runner, version, closed}

export async function mount(root) {
  const entry = claim(state, root, { runner: null, version: 0, closed: false });
  if (!entry) return;
  showEnd(root.querySelector(".mha-first__scroll"));
  const button = root.querySelector(".mha-first__live");
  if (!button) return;
  const problem = supportProblem();
  if (problem) {
    button.after(el("p", { class: "mha-first__status", text: `Live mode needs a newer browser: ${problem}.` }));
    return;
  }
  button.disabled = false;
  button.addEventListener("click", () => goLive(root, entry, button), { once: true });
  root.dataset.state = "ready";
}

export function dispose(root) {
  const entry = release(state, root, ["state"]);
  if (!entry) return;
  entry.closed = true;
  if (entry.runner) entry.runner.release();
}

async function goLive(root, entry, button) {
  button.disabled = true;
  root.dataset.state = "loading";
  const bar = el("progress", { max: 100, value: 0, "aria-label": "Download progress" });
  const words = el("span", { text: "Downloading…" });
  const status = el("p", { class: "mha-first__status", role: "status" }, words, bar);
  button.parentElement.after(status);
  const planned = Number(root.dataset.downloadBytes) || 0;
  let engine = { loaded: 0, total: 0 };
  let model = { loaded: 0, total: 0 };
  const show = () => {
    const loaded = engine.loaded + model.loaded;
    const total = Math.max(planned, engine.total + model.total, loaded);
    bar.value = total ? Math.min(99, Math.floor((100 * loaded) / total)) : 0;
    words.textContent = `Downloading the model and onnxruntime: ${formatBytes(loaded)} of ${formatBytes(total)} `;
  };
  const stop = onEngineProgress((s) => {
    engine = s;
    show();
  });
  try {
    const [manifest, vocabJson] = await Promise.all([
      loadJSON("wasm_assets/models/manifest.json"),
      loadJSON("wasm_assets/vocab.json"),
    ]);
    checkManifest(manifest, vocabJson);
    const vocab = new Vocabulary(vocabJson);
    const meta = manifest.models.find((m) => m.name === root.dataset.model);
    if (!meta || !(meta.heads > 0))
      throw new Error(`the site's manifest has no attention model named ${root.dataset.model}`);
    const [ort, bytes] = await Promise.all([
      loadOrt("wasm"), // the smaller build: the download the button announced
      loadBytes(`wasm_assets/${meta.file}`, {
        bytes: meta.bytes,
        sha256: meta.sha256,
        onProgress: (p) => {
          model = p;
          show();
        },
      }),
    ]);
    const T = contextLength(manifest, vocab);
    const runner = await ModelRunner.create(ort, bytes, { name: meta.name, T, heads: meta.heads }, "wasm");
    if (entry.closed) {
      runner.release();
      return;
    }
    entry.runner = runner;
    stop();
    status.remove();
    button.parentElement.remove();
    buildLive(root, entry, { vocab, T, meta, excluded: manifest.generation.excluded_ids });
  } catch (err) {
    stop();
    if (entry.closed) return;
    status.replaceChildren(
      el("span", {
        class: "mha-panel mha-panel--error",
        role: "alert",
        text: learnerMessage(
          err,
          `The live model could not start: ${err.message}. Reload the page to try again; the figure above stays as it is.`,
        ),
      }),
    );
    root.dataset.state = "failed";
  }
}

function buildLive(root, entry, { vocab, T, meta, excluded }) {
  const view = root.querySelector(".mha-first__view");
  const mask = new Array(meta.heads).fill(1);
  const input = el("input", {
    type: "text",
    value: root.dataset.sentence || "",
    spellcheck: false,
    autocomplete: "off",
    maxlength: 400,
  });
  const legend = uid("mha-first-heads");
  const boxes = Array.from({ length: meta.heads }, (_, h) => {
    const box = el("input", { type: "checkbox", checked: true, "data-head": h + 1 });
    box.addEventListener("change", () => {
      mask[h] = box.checked ? 1 : 0;
      update();
    });
    return el(
      "label",
      { style: `--head:${headColourVar(h)}` },
      box,
      el("span", { class: "mha-first__swatch", "aria-hidden": "true" }),
      `head ${h + 1}`,
    );
  });
  const guess = el("p", { class: "mha-first__guess", "aria-live": "polite" });
  const table = el("div");
  const form = el(
    "div",
    { class: "mha-first__form" },
    el("label", { class: "mha-first__text" }, "Your sentence (the model guesses the word after it)", input),
    el(
      "fieldset",
      { class: "mha-first__heads", "aria-describedby": legend },
      el("legend", { id: legend, text: "Heads on (untick to switch one off)" }),
      boxes,
    ),
  );
  view.replaceChildren(form, guess, table);
  const caption = root.querySelector("figcaption");
  if (caption)
    caption.textContent =
      `Live: the shipped model with ${meta.heads} heads runs in this browser (WebAssembly). Each head has its own weights ` +
      `from the last word (“start” marks the beginning of a story); a switched-off head still computes them, but its message ` +
      "is left out of the prediction.";
  input.addEventListener("input", update);
  input.focus();
  root.dataset.state = "live";

  async function update() {
    const version = ++entry.version;
    const text = input.value;
    const history = promptHistory(vocab, text);
    const window = contextWindow(history, T, vocab.special.PAD);
    root.dataset.state = "running";
    let full;
    let now;
    try {
      full = await entry.runner.run(window);
      now = mask.every((v) => v === 1) ? full : await entry.runner.run(window, mask);
    } catch (err) {
      if (version === entry.version && !entry.closed)
        guess.textContent = `The model could not read this: ${err.message}.`;
      return;
    }
    if (version !== entry.version || entry.closed) return;
    const pFull = probabilities(full.logits, excluded);
    const pNow = now === full ? pFull : probabilities(now.logits, excluded);
    const [topFull] = topK(pFull, 1);
    const [topNow] = topK(pNow, 1);
    const word = (id) => el("strong", { class: "mha-first__word", text: tokenText(vocab, id) });
    const pct = (p) => `${(p * 100).toFixed(1)}%`;
    const label = maskLabel(meta, mask);
    const parts = [
      text.trim() ? "Next-word guess" : "With no sentence, the guess for a story's first word",
      " (",
      label,
      "): ",
      word(topNow),
      ` (${pct(pNow[topNow])}).`,
    ];
    if (now !== full) {
      if (topNow === topFull) parts.push(` With all heads: the same word, at ${pct(pFull[topFull])}.`);
      else parts.push(" With all heads it was ", word(topFull), ` (${pct(pFull[topFull])}).`);
    }
    guess.replaceChildren(...parts);
    guess.dataset.guess = String(topNow);
    guess.dataset.full = String(topFull);
    const before = table.querySelector(".mha-first__scroll");
    const scroller = weightsTable(vocab, text, history, window, full.attention, meta.heads, mask);
    table.replaceChildren(scroller);
    // The receiver (the last word) is what the figure is about: a long sentence shows its end, unless the
    // learner had scrolled back to read earlier words, whose place a switched head then keeps.
    if (before && before.scrollLeft + before.clientWidth < before.scrollWidth - 1)
      scroller.scrollLeft = before.scrollLeft;
    else showEnd(scroller);
    root.dataset.state = "live";
  }
  update();
}

function showEnd(scroller) {
  if (scroller) scroller.scrollLeft = scroller.scrollWidth;
}

// The same table as the build's (page_macros/running.py): rows are heads, columns the words read.
function weightsTable(vocab, text, history, window, attention, heads, mask) {
  const T = window.length;
  const tokens = lastT(["start", ...tokenize(text)], T);
  const n = tokens.length;
  const ids = window.slice(T - n);
  const head = tokens.map((t, j) =>
    el(
      "th",
      { scope: "col", class: j === n - 1 ? "mha-first__receiver" : null },
      ids[j] === vocab.special.UNK ? [t, el("span", { class: "mha-sr", text: " (unknown to the model)" })] : t,
    ),
  );
  const rows = Array.from({ length: heads }, (_, h) =>
    el(
      "tr",
      { style: `--head:${headColourVar(h)}`, class: mask[h] ? null : "mha-first__off" },
      el("th", { scope: "row" }, el("span", { class: "mha-first__swatch", "aria-hidden": "true" }), `head ${h + 1}`),
      ids.map((_, j) => {
        const w = attention[h * T + (T - n) + j];
        return el(
          "td",
          {},
          el("span", { class: "mha-first__bar", style: `--w:${w.toFixed(4)}`, "aria-hidden": "true" }),
          el("span", { class: "mha-first__pct", text: `${Math.round(w * 100)}%` }),
        );
      }),
    ),
  );
  return el(
    "div",
    { class: "mha-first__scroll", tabindex: 0, role: "region", "aria-label": `The ${heads} heads' weights` },
    el(
      "table",
      { class: "mha-first__table" },
      el("caption", {
        class: "mha-sr",
        text: `Each head's weights from the last word, “${tokens[n - 1]}”, to every word read; each row adds up to 100 %.`,
      }),
      el("thead", {}, el("tr", {}, el("td"), head)),
      el("tbody", {}, rows),
    ),
  );
}
