// Head switches in the token inspector: turn heads of an attention model off
// for the inspected step and see what the model would have predicted, then
// continue the story without those heads beside the full model.
//
// A switched-off head gets 0 in the model's head_mask input: its message is
// left out before W_O (export/multihead.py). Its attention weights are still
// computed, so the heatmap above does not change; only what the model does
// with them does.

import { el, uid } from "../runtime/dom.js";
import { generateIds, probabilities, topK } from "../runtime/generate.js";
import { detokenize } from "../runtime/tokenizer.js";
import { tokenText } from "./format.js";
import { headEffectBars, measureHeadEffects } from "./head_effects.js";
import { headColourVar } from "../runtime/palette.js";

function percent(p) {
  return `${(p * 100).toFixed(1)}%`;
}

// "without head 2", "without heads 1 and 3", "without any head"
export function maskLabel(model, mask) {
  const off = mask.map((v, h) => (v ? null : h + 1)).filter((h) => h !== null);
  if (!off.length) return "all heads";
  if (off.length === model.heads) return model.heads === 1 ? "without its head" : "without any head";
  if (off.length === 1) return `without head ${off[0]}`;
  return `without heads ${off.slice(0, -1).join(", ")} and ${off[off.length - 1]}`;
}

// ?prompt=TEXT&inspect=MODEL&head=K: open the inspector on the step before the
// first generated token of MODEL for that opening (the head atlas links here).
export function inspectRequest(search = location.search) {
  const params = new URLSearchParams(search);
  const prompt = params.get("prompt");
  const model = params.get("inspect");
  if (prompt === null || !model) return null;
  const head = Number(params.get("head"));
  return { prompt, model, head: Number.isInteger(head) && head >= 1 ? head : null };
}

// Adds one block of switches per running attention model to the inspector.
// view: { window, outputs: {name: {logits}}, models, runners: {name: ModelRunner},
//   vocab, T, excluded (ids never picked), maxNewTokens,
//   focus: {model, head} | null }
export function addHeadToggles(section, view) {
  const blocks = [];
  for (const model of view.models) {
    const runner = view.runners[model.name];
    const full = view.outputs[model.name];
    if (!(model.heads > 0) || !runner || !runner.hasHeadMask || !full || !full.logits) continue;
    blocks.push(new HeadToggles(model, runner, full, view));
  }
  if (!blocks.length) return [];
  section.append(
    el("h3", { text: "Switch heads off" }),
    el("p", {
      class: "mha-knock__intro",
      text:
        "Untick a head to leave its message out of this step (its weights above stay as they were). " +
        "The model then predicts again from the same window; “Continue” writes the story on from here without those heads, beside the full model.",
    }),
    el(
      "div",
      { class: "mha-knock" },
      blocks.map((b) => b.node),
    ),
  );
  const focus = view.focus && blocks.find((b) => b.model.name === view.focus.model);
  if (focus && view.focus.head) focus.focusHead(view.focus.head);
  return blocks;
}

class HeadToggles {
  constructor(model, runner, full, view) {
    this.model = model;
    this.runner = runner;
    this.full = full;
    this.view = view;
    this.mask = new Array(model.heads).fill(1);
    this.version = 0;
    this.fullStory = null; // the full model's continuation from this step, computed once
    const legendId = uid("mha-knock-legend");
    this.boxes = [];
    const toggles = el(
      "fieldset",
      { class: "mha-knock__toggles", "aria-describedby": legendId },
      el("legend", { id: legendId, text: `${model.label}: heads on this step` }),
      Array.from({ length: model.heads }, (_, h) => {
        const box = el("input", {
          type: "checkbox",
          checked: true,
          "data-head": h + 1,
          onchange: () => this.setHead(h, box.checked),
        });
        this.boxes.push(box);
        return el(
          "label",
          { class: "mha-knock__toggle", "data-head": h + 1 },
          box,
          el("span", { class: "mha-knock__swatch", "aria-hidden": "true", style: { background: headColourVar(h) } }),
          model.heads === 1 ? "the one head" : `head ${h + 1}`,
        );
      }),
    );
    this.summary = el("p", { class: "mha-knock__summary", "aria-live": "polite" });
    this.lists = el("div", { class: "mha-knock__lists" });
    this.continueButton = el("button", {
      type: "button",
      class: "md-button mha-knock__continue",
      disabled: true,
      text: "Continue without the switched-off heads",
      onclick: () => this.continueStory(),
    });
    this.stories = el("div", { class: "mha-knock__stories", "aria-live": "polite" });
    this.effects = el("div", { class: "mha-knock__effects" });
    this.node = el(
      "section",
      { class: "mha-knock__model", "data-model": model.name, "aria-label": `${model.label}: switch heads off` },
      toggles,
      this.summary,
      this.lists,
      this.effects,
      this.continueButton,
      this.stories,
    );
    this.show(full);
    if (model.heads > 1) this.showEffects();
  }

  // What each head did to this step's guess: the full model's top token with each head switched off alone.
  async showEffects() {
    try {
      const effects = await measureHeadEffects(this.runner, this.view.window, this.full, this.view.excluded);
      this.effects.replaceChildren(headEffectBars(effects, this.view.vocab));
      this.node.dataset.effects = "shown";
    } catch (err) {
      this.effects.replaceChildren(el("p", { text: `What each head did could not be measured: ${err.message}.` }));
    }
  }

  focusHead(head) {
    const box = this.boxes[head - 1];
    if (!box) return;
    box.closest(".mha-knock__toggle").classList.add("mha-knock__toggle--focus");
    box.focus({ preventScroll: true });
  }

  async setHead(h, on) {
    this.mask[h] = on ? 1 : 0;
    const version = ++this.version;
    const allOn = this.mask.every((v) => v === 1);
    this.continueButton.disabled = allOn;
    this.continueButton.textContent = allOn
      ? "Continue without the switched-off heads"
      : `Continue ${maskLabel(this.model, this.mask)}`;
    this.stories.replaceChildren();
    this.node.dataset.state = "running";
    let output;
    try {
      output = allOn ? this.full : await this.runner.run(this.view.window, this.mask);
    } catch (err) {
      if (version === this.version) this.summary.textContent = `This step could not be re-run: ${err.message}.`;
      return;
    }
    if (version !== this.version) return; // a later switch already started another run
    this.show(output);
  }

  // The five most likely next tokens with all heads and with the switches as
  // they are, and one sentence on what changed at the top.
  show(output) {
    const { vocab } = this.view;
    const excluded = this.view.excluded; // the manifest's generation.excluded_ids
    const pFull = probabilities(this.full.logits, excluded);
    const pNow = output === this.full ? pFull : probabilities(output.logits, excluded);
    const label = maskLabel(this.model, this.mask);
    // both lists' bars against the largest probability either shows, not against 100 %
    const scale = Math.max(pFull[topK(pFull, 1)[0]], pNow[topK(pNow, 1)[0]]) || 1;
    const list = (title, p, other, kind) => {
      const items = topK(p, 5).map((id) => {
        const delta = p[id] - other[id];
        const change =
          kind === "masked" && Math.abs(delta) >= 0.0005
            ? ` (${delta > 0 ? "+" : "−"}${(Math.abs(delta) * 100).toFixed(1)})`
            : "";
        return el(
          "li",
          { "data-id": id },
          el("span", { class: "mha-topk__tok", text: tokenText(vocab, id) }),
          el(
            "span",
            { class: "mha-topk__bar", "aria-hidden": "true" },
            el("span", { style: `width:${Math.max(1, (100 * p[id]) / scale).toFixed(1)}%` }),
          ),
          el("span", { class: "mha-topk__p", text: percent(p[id]) + change }),
        );
      });
      return el(
        "div",
        { class: `mha-knock__list mha-knock__list--${kind}` },
        el("h4", { text: title }),
        el("ol", { class: "mha-knock__top" }, items),
      );
    };
    const same = this.mask.every((v) => v === 1);
    const lists = [list(`${this.model.label}, all heads`, pFull, pFull, "full")];
    if (!same) lists.push(list(`${this.model.label}, ${label}`, pNow, pFull, "masked"));
    this.lists.replaceChildren(...lists);
    const [topFull] = topK(pFull, 1);
    const [topNow] = topK(pNow, 1);
    if (same) {
      this.summary.textContent = `All heads are on: the most likely next token is “${tokenText(vocab, topFull)}” (${percent(pFull[topFull])}).`;
    } else if (topNow === topFull) {
      this.summary.textContent =
        `${capital(label)}, the most likely next token stays “${tokenText(vocab, topFull)}”: ` +
        `${percent(pFull[topFull])} → ${percent(pNow[topFull])}.`;
    } else {
      this.summary.textContent =
        `${capital(label)}, the most likely next token changes from “${tokenText(vocab, topFull)}” ` +
        `(${percent(pFull[topFull])}, now ${percent(pNow[topFull])}) to “${tokenText(vocab, topNow)}” (${percent(pNow[topNow])}).`;
    }
    this.node.dataset.state = "shown";
    this.node.dataset.mask = this.mask.join("");
    this.node.dataset.top = String(topNow);
  }

  // Continuations from this step's window: the full model and the model with
  // the current switches, side by side. They sample as the column did (its
  // temperature, and its sampler's state at this step: view.sampling), so with
  // every head on the story is the column's own continuation, and a masked
  // story differs only where the switched-off heads change a choice.
  async continueStory() {
    const { vocab, T } = this.view;
    const mask = [...this.mask];
    const version = this.version;
    const history = this.view.window.filter((id) => id !== vocab.special.PAD);
    const sampling = this.view.sampling || { temperature: 0, seed: 0, rngState: null };
    const options = {
      maxNewTokens: this.view.maxNewTokens,
      temperature: sampling.temperature,
      seed: sampling.seed,
      rngState: sampling.rngState,
      T,
      special: vocab.special,
      excluded: this.view.excluded,
      limit: this.view.maxNewTokens,
    };
    this.continueButton.disabled = true;
    this.stories.replaceChildren(el("p", { text: "Writing both continuations…" }));
    this.node.dataset.story = "running";
    try {
      if (!this.fullStory) this.fullStory = await generateIds((w) => this.runner.run(w), history, options);
      const masked = await generateIds((w) => this.runner.run(w, mask), history, options);
      if (version !== this.version) return;
      this.renderStories(this.fullStory, masked, mask);
    } catch (err) {
      if (version === this.version)
        this.stories.replaceChildren(
          el("p", { class: "mha-panel mha-panel--error", text: `The continuation stopped: ${err.message}.` }),
        );
    } finally {
      if (version === this.version) this.continueButton.disabled = this.mask.every((v) => v === 1);
    }
  }

  renderStories(full, masked, mask) {
    const { vocab } = this.view;
    const story = (title, result, compareTo, kind) => {
      const joined = [];
      result.ids.forEach((id, i) => {
        const text = tokenText(vocab, id);
        // The same spacing as detokenize: no space before closing punctuation.
        if (i) {
          const prev = tokenText(vocab, result.ids[i - 1]);
          joined.push(detokenize([prev, text]).length === prev.length + text.length ? "" : " ");
        }
        joined.push(compareTo && compareTo.ids[i] !== id ? el("mark", { text }) : text);
      });
      return el(
        "div",
        { class: `mha-knock__story mha-knock__story--${kind}`, "data-ids": result.ids.join(" ") },
        el("h4", { text: title }),
        el("p", {}, joined, result.endedWithEos ? " [end of story]" : ""),
      );
    };
    const differ = full.ids.findIndex((id, i) => masked.ids[i] !== id);
    const note =
      differ === -1 && full.ids.length === masked.ids.length && full.endedWithEos === masked.endedWithEos
        ? "The two continuations are the same: these heads did not change any greedy choice here."
        : `They part at token ${(differ === -1 ? Math.min(full.ids.length, masked.ids.length) : differ) + 1}; marked words differ from the full model's.`;
    this.stories.replaceChildren(
      el(
        "div",
        { class: "mha-knock__pair" },
        story(`${this.model.label}, all heads`, full, null, "full"),
        story(`${this.model.label}, ${maskLabel(this.model, mask)}`, masked, full, "masked"),
      ),
      el("p", { class: "mha-knock__note", text: note }),
    );
    this.node.dataset.story = "done";
    this.lastStory = {
      mask,
      full: { ids: full.ids, ended_with_eos: full.endedWithEos, text: detokenize(vocab.decode(full.ids)) },
      masked: { ids: masked.ids, ended_with_eos: masked.endedWithEos, text: detokenize(vocab.decode(masked.ids)) },
    };
  }
}

function capital(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
