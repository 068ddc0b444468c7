// Explore on the microgpt page: the prefixes of the names list where switching
// one head (or every head) off moves microgpt's next-letter distribution most,
// as measured over the whole list by the pipeline (wasm_assets/microgpt_heads.json,
// export/microgpt/head_effect.py). One button per prefix loads that name, that
// prefix and that switch setting into the charts above (onPick).

import { el, uid } from "./ui.js";

export const HEADS_PATH = "wasm_assets/microgpt_heads.json";

const percent = (p) => `${(p * 100).toFixed(p >= 0.1 ? 0 : 1)}%`;
const symbol = (s) => (s === "end" ? "⏎" : s);

// The settings the file lists, in its order: head1_off ... headN_off, all_off.
function settingLabel(key) {
  if (key === "all_off") return "Every head off";
  const m = /^head(\d+)_off$/.exec(key);
  return m ? `Head ${m[1]} off` : key;
}

// The heads a setting switches off (1-based), for the switches above.
export function headsOff(key, nHead) {
  if (key === "all_off") return Array.from({ length: nHead }, (_, h) => h + 1);
  const m = /^head(\d+)_off$/.exec(key);
  return m ? [Number(m[1])] : [];
}

export function whereHeadsMatter(heads, onPick) {
  const settings = Object.keys(heads.top);
  let current = settings.includes("all_off") ? "all_off" : settings[0];
  const labelId = uid("mgpt-where");
  const tabs = settings.map((key) => {
    const button = el("button", {
      type: "button",
      class: "mgpt-chip",
      "aria-pressed": String(key === current),
      "data-setting": key,
      text: settingLabel(key),
    });
    button.addEventListener("click", () => {
      current = key;
      draw();
    });
    return button;
  });
  const summary = el("p", { class: "mgpt-explore__hint", "aria-live": "polite" });
  const list = el("ol", { class: "mgpt-where__list" });
  function draw() {
    for (const b of tabs) b.setAttribute("aria-pressed", String(b.dataset.setting === current));
    summary.textContent =
      `${settingLabel(current)}: on average over all ${heads.predictions.toLocaleString("en")} predictions, ` +
      `${percent(heads.effect[current])} of the probability moves. The ${heads.top[current].length} prefixes where it moves most:`;
    list.dataset.setting = current;
    list.replaceChildren(
      ...heads.top[current].map((entry) => {
        const prefix = entry.prefix || "∙";
        const button = el(
          "button",
          {
            // Named by its visible text (axe: label-content-name-mismatch); the hint above says what pressing does.
            type: "button",
            class: "mgpt-where__pick",
            "data-name": entry.name,
            "data-prefix": entry.prefix,
            "data-tv": String(entry.tv),
          },
          el("strong", { class: "mgpt-where__tv", text: percent(entry.tv) }),
          el("span", { text: ` after “${prefix}”` }),
          el("span", {
            class: "mgpt-where__detail",
            text:
              ` (${entry.name}${entry.names_with_prefix > 1 ? ` and ${entry.names_with_prefix - 1} more` : ""}): ` +
              `${symbol(entry.top_before)} ${percent(entry.p_before)} → ${symbol(entry.top_after)} ${percent(entry.p_after)}`,
          }),
        );
        button.addEventListener("click", () => onPick(entry, current));
        return el("li", {}, button);
      }),
    );
  }
  draw();
  return el(
    "section",
    { class: "mgpt-where", "aria-labelledby": labelId },
    el("h3", { id: labelId, text: "Where switching heads off matters most" }),
    el("p", {
      class: "mgpt-explore__hint",
      text:
        "Measured over the whole names list: the share of probability that moves " +
        "(total variation distance: half the summed differences of the 27 probabilities; 0% unchanged, 100% nothing in common). " +
        "Press a line to load that name, prefix and switches above.",
    }),
    el("div", { class: "mgpt-prefixes", role: "group", "aria-label": "Which heads are off" }, tabs),
    summary,
    list,
  );
}
