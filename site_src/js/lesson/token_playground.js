// Lesson page 3: the tokenizer and windows playground.
//
//   <div data-mha-widget="token_playground"></div>
//
// The learner types a sentence and sees it as our word tokens (runtime/tokenizer.js,
// the models' own rules), as characters and as byte-pair pieces (runtime/bpe.js
// on the shipped wasm_assets/bpe_tokenizer.json), then the word tokens' ids in
// the models' vocabulary (wasm_assets/vocab.json) with UNK marked, and the
// (context, target) pairs for a window width chosen with a slider (2 … 8), the
// way export/windows.py cuts a story: BOS + ids + EOS, one pair per target, the
// context the w ids before it, PAD on the left where there are fewer.

import { loadJSON } from "../runtime/assets.js";
import { BPE } from "../runtime/bpe.js";
import { el, uid } from "../runtime/dom.js";
import { claim, failedPanel, holds, release } from "../runtime/widget.js";
import { tokenize, Vocabulary } from "../runtime/tokenizer.js";

const VOCAB = "wasm_assets/vocab.json";
const BPE_FILE = "wasm_assets/bpe_tokenizer.json";
const SUBWORDS = "wasm_assets/subwords.json";
const MAX_CHARS = 200;
export const WIDTHS = { min: 2, max: 8 };

// Characters as page 3's figure shows them (export/lesson/subwords.py three_ways): NFKC, lowercase.
export function characters(text) {
  return Array.from(String(text).normalize("NFKC").toLowerCase());
}

// export/windows.py make_windows for one story: [context ids (w, PAD-padded on the left), target id].
export function windowPairs(ids, w, special) {
  const story = [special.BOS, ...ids, special.EOS];
  const pairs = [];
  for (let t = 1; t < story.length; t++) {
    const before = story.slice(Math.max(0, t - w), t);
    pairs.push([[...Array(w - before.length).fill(special.PAD), ...before], story[t]]);
  }
  return pairs;
}

const state = new Map();

function chips(tokens, { unk = () => false, title = null, cls = "" } = {}) {
  return el(
    "ol",
    { class: `mha-tp__chips ${cls}` },
    tokens.map((t, i) =>
      el(
        "li",
        {
          class: `mha-tp__chip${unk(i) ? " is-unk" : ""}`,
          title: title ? title(i) : null,
        },
        t === " " ? "\u2423" : t,
        unk(i) ? el("span", { class: "mha-tp__unk", text: " UNK" }) : null,
      ),
    ),
  );
}

export async function mount(root) {
  const entry = claim(state, root);
  if (!entry) return;
  let vocab;
  let bpe;
  let example;
  try {
    const [v, b, s] = await Promise.all([loadJSON(VOCAB), loadJSON(BPE_FILE), loadJSON(SUBWORDS)]);
    vocab = new Vocabulary(v);
    bpe = new BPE(b);
    example = s.example;
  } catch (err) {
    root.replaceChildren(failedPanel("The tokenizer playground could not start", err));
    return;
  }
  if (!holds(state, root, entry)) return;
  const id = uid("mha-tp");
  const name = (i) => vocab.itos[i];
  const input = el("input", {
    type: "text",
    id: `${id}-text`,
    class: "mha-tp__input",
    value: root.dataset.text || example,
    maxlength: String(MAX_CHARS),
    autocomplete: "off",
    spellcheck: false,
  });
  const slider = el("input", {
    type: "range",
    id: `${id}-w`,
    min: String(WIDTHS.min),
    max: String(WIDTHS.max),
    step: "1",
    value: String(root.dataset.width || 4),
    class: "mha-tp__slider",
  });
  const firstW = Number(slider.value);
  let moved = false;
  const wShown = el("output", { for: slider.id, class: "mha-tp__w" });
  const rows = el("div", { class: "mha-tp__rows" });
  const idsBox = el("div", { class: "mha-tp__ids" });
  const count = el("p", { class: "mha-tp__count", role: "status", "aria-live": "polite" });
  const pairsBox = el("div", {
    class: "mha-tp__pairs",
    tabindex: "0",
    role: "region",
    "aria-label": "The (context, target) pairs",
  });

  function row(label, tokens, opts) {
    return el(
      "div",
      { class: "mha-tp__row", "data-kind": opts.kind },
      el("p", { class: "mha-tp__label" }, el("strong", { text: label }), ` ${tokens.length} tokens`),
      chips(tokens, opts),
    );
  }

  function draw() {
    const text = input.value;
    const words = tokenize(text);
    const ids = vocab.encodeTokens(words);
    const isUnk = (i) => ids[i] === vocab.special.UNK;
    const pieces = bpe.tokens(text);
    rows.replaceChildren(
      row("Words (our models’ tokenizer):", words, { kind: "words", unk: isUnk }),
      row(
        `Subwords (a ${bpe.vocab.size.toLocaleString("en")}-piece BPE, for comparison only; our models do not use it):`,
        pieces,
        { kind: "subwords", unk: (i) => pieces[i] === bpe.unk },
      ),
      row("Characters:", characters(text), { kind: "characters" }),
    );
    const unkCount = ids.filter((x) => x === vocab.special.UNK).length;
    // punctuation marks are tokens but not words: "2 of 7 words", not "2 of 8", for "... a blorf!"
    const wordCount = words.filter((t) => /[\p{L}\p{N}]/u.test(t)).length;
    idsBox.replaceChildren(
      el(
        "p",
        { class: "mha-tp__label" },
        el("strong", { text: "Ids in the models’ vocabulary:" }),
        ` ${unkCount ? `${unkCount} of ${wordCount} words${wordCount < words.length ? " (punctuation aside)" : ""} are not in the ${vocab.C.toLocaleString("en")}-word vocabulary and become UNK (id ${vocab.special.UNK})` : `every word is in the ${vocab.C.toLocaleString("en")}-word vocabulary`}`,
      ),
      chips(ids.map(String), { kind: "ids", unk: isUnk, title: (i) => words[i], cls: "mha-tp__chips--ids" }),
    );
    const w = Number(slider.value);
    wShown.textContent = `w = ${w}`;
    slider.setAttribute("aria-valuetext", `window width ${w}`);
    const pairs = windowPairs(ids, w, vocab.special);
    // The check question under the playground asks whether w changes the count: the widget says why
    // the count stays only once the learner has moved the slider and seen it for themselves.
    if (w !== firstW) moved = true;
    count.textContent = moved
      ? `${pairs.length} targets with w = ${w}: one per token (${words.length}, punctuation included) and one for EOS. ` +
        "The count stays; only the contexts change."
      : `${pairs.length} targets with w = ${w}. Move the slider: does the count change?`;
    root.dataset.targets = String(pairs.length);
    const tokenName = (x) =>
      x === vocab.special.PAD
        ? "PAD"
        : x === vocab.special.BOS
          ? "BOS"
          : x === vocab.special.EOS
            ? "EOS"
            : x === vocab.special.UNK
              ? "UNK"
              : name(x);
    // The columns share the widget's width (widgets.css): a token too long for its cell is cut
    // short with an ellipsis, its whole text still in the cell for a screen reader and in its title.
    const cell = (x, cls) => el("td", { class: cls, text: tokenName(x), title: tokenName(x) });
    const body = el(
      "tbody",
      {},
      pairs.map(([ctx, target], n) =>
        el(
          "tr",
          { "data-ids": `${ctx.join(" ")} > ${target}` },
          el("th", { scope: "row", text: String(n + 1) }),
          ...ctx.map((x) => cell(x, x === vocab.special.PAD ? "is-pad" : x === vocab.special.UNK ? "is-unk" : null)),
          cell(target, `mha-tp__target${target === vocab.special.UNK ? " is-unk" : ""}`),
        ),
      ),
    );
    pairsBox.replaceChildren(
      el(
        "table",
        { class: `mha-tp__table${w >= 5 ? " mha-tp__table--wide" : ""}`, style: `--mha-tp-w: ${w}` },
        el("caption", {
          text: `Every (context, target) pair of this sentence for w = ${w}: the context is the ${w} ids before the target`,
        }),
        el(
          "thead",
          {},
          el(
            "tr",
            {},
            el("th", { scope: "col", text: "#" }),
            ...Array.from({ length: w }, (_, k) =>
              el("th", { scope: "col" }, el("span", { class: "mha-tp__slot-word", text: "slot " }), String(k)),
            ),
            el("th", { scope: "col", text: "target" }),
          ),
        ),
        body,
      ),
    );
  }
  input.addEventListener("input", draw);
  slider.addEventListener("input", draw);

  root.replaceChildren(
    el(
      "div",
      { class: "mha-tp" },
      el("div", { class: "mha-tp__field" }, el("label", { for: input.id, text: "Type a sentence:" }), input),
      rows,
      idsBox,
      el(
        "div",
        { class: "mha-tp__field mha-tp__field--w" },
        el("label", { for: slider.id, text: "Window width" }),
        slider,
        wShown,
      ),
      count,
      pairsBox,
    ),
  );
  root.dataset.ready = "true";
  draw();
}

export function dispose(root) {
  release(state, root);
}
