// "Your attention drives the model": once the learner's multi_head_attention
// passes, their function computes the update rows and the rest of the trained
// model (the tail graph: residual, ReLU layer, vocabulary head) predicts from
// the final row. Their top 5 next words stand beside the model's own, then a
// greedy continuation in which every step is one job of the learner's
// function (so each step has its own 5-second stop), all of them in one fresh
// Python that runs nothing else (runner.js series: a fresh start per word
// took longer than the word), beside the model's own continuation.
//
// When the learner's update rows differ from the model's everywhere but the
// last row (the mask removed), the prediction cannot change: only the final
// row feeds it. The page asks about it instead of leaving it a surprise.

import { el } from "../runtime/dom.js";
import { errorText } from "../runtime/widget.js";
import { chooseNext, probabilities, topK } from "../runtime/generate.js";
import { agrees, basics, logitsAfter, tensorsFor } from "./graph.js";

export const STEPS = 12; // words continued, each one job of the learner's function

function argmax(logits, excluded) {
  return chooseNext(logits, 0, null, excluded);
}

function topWords(vocab, logits, excluded) {
  const probs = probabilities(logits, excluded);
  return topK(probs, 5).map((id) => ({ id, word: vocab.itos[id], p: probs[id] }));
}

// The learner's update rows for the history `ids` (one job of the series), or throws with the job's words.
async function learnerUpdate(call, g, weights, heads, tokens) {
  const inputs = { function: "multi_head_attention", calls: [[g.E, weights, heads]], tokens, n_heads: heads };
  const result = await call(inputs);
  if (
    result.timedOut ||
    result.failed ||
    result.stop ||
    !Array.isArray(result.outputs) ||
    !Array.isArray(result.outputs[0])
  ) {
    throw new Error(result.message || "your multi_head_attention did not give update rows");
  }
  return { rows: result.outputs[0], ms: result.ms };
}

// Both continuations of `ids`: the model's own and the one the learner's function drives.
export async function drive({ runner, source, ids, tokens, tolerance, steps = STEPS, onProgress = () => {} }) {
  const { vocab, weights, heads, excluded } = await basics();
  const EOS = vocab.special.EOS;
  const model = { ids: ids.slice(), words: [] };
  const mine = { ids: ids.slice(), words: [] };
  let first = null;
  for (let s = 0; s < steps; s++) {
    const g = await tensorsFor(model.ids);
    if (s === 0) first = { model: topWords(vocab, g.logits, excluded) };
    const next = argmax(g.logits, excluded);
    if (next === EOS) break;
    model.ids.push(next);
    model.words.push(vocab.itos[next]);
  }
  let question = false;
  const timings = { steps: [], jobs: [] }; // ms of each word, and of the learner's call within it (bench/build_bench.py)
  await runner.series(source, async (call) => {
    for (let s = 0; s < steps; s++) {
      onProgress(s, steps);
      const started = performance.now();
      const g = await tensorsFor(mine.ids);
      const words = [...tokens, ...mine.words];
      const { rows: update, ms } = await learnerUpdate(call, g, weights, heads, words);
      const logits = await logitsAfter(g.E[g.n - 1], update[update.length - 1]);
      if (s === 0) {
        first.mine = topWords(vocab, logits, excluded);
        const rest = (rows) => rows.slice(0, -1);
        question =
          !agrees(rest(update), rest(g.update), tolerance) && agrees(update.slice(-1), g.update.slice(-1), tolerance);
      }
      const next = argmax(logits, excluded);
      timings.steps.push(performance.now() - started);
      timings.jobs.push(ms);
      if (next === EOS) break;
      mine.ids.push(next);
      mine.words.push(vocab.itos[next]);
    }
  });
  onProgress(steps, steps);
  const same = mine.words.length === model.words.length && mine.words.every((w, i) => w === model.words[i]);
  return { top: first, model: model.words, mine: mine.words, same, question, timings };
}

// The block under the exercise: a button, progress, and the two predictions side by side.
export function driveBlock({ runner, code, prompt, tolerance, isOpen, onBusy }) {
  const button = el("button", {
    type: "button",
    class: "md-button md-button--primary",
    text: "Let your attention drive the model",
    disabled: true,
  });
  const LOCKED =
    "Pass multi_head_attention first: then your function computes the update rows that the rest of the trained model reads.";
  const OPEN =
    "Your multi_head_attention passed: let it compute the update rows that the rest of the trained model reads, word by word.";
  const note = el("p", { class: "mha-build__note", role: "status", "aria-live": "polite", text: LOCKED });
  const results = el("div", { class: "mha-build__drive" });
  const block = el(
    "section",
    { class: "mha-build__driver", "aria-label": "Your attention drives the model" },
    el("h3", { text: "Your attention drives the model" }),
    note,
    button,
    results,
  );
  let busy = false;
  let shownFor = null; // the prompt whose drive (or failure) the block shows
  // The button, and the words above it, follow the exercise: results of another prompt go.
  const refresh = () => {
    button.disabled = busy || !isOpen() || !prompt();
    if (busy) return;
    const p = prompt();
    if (shownFor !== null && (!p || p.text !== shownFor)) {
      results.replaceChildren();
      shownFor = null;
    }
    if (shownFor === null) note.textContent = isOpen() ? OPEN : LOCKED;
  };

  const table = (title, top) =>
    el(
      "table",
      { class: "mha-build__top" },
      el("caption", { text: title }),
      el(
        "thead",
        {},
        el("tr", {}, el("th", { scope: "col", text: "next word" }), el("th", { scope: "col", text: "probability" })),
      ),
      el(
        "tbody",
        {},
        top.map((t) =>
          el("tr", {}, el("td", {}, el("code", { text: t.word })), el("td", { text: `${(100 * t.p).toFixed(1)} %` })),
        ),
      ),
    );

  async function run(source = code()) {
    const p = prompt();
    shownFor = p.text;
    busy = true;
    onBusy(true);
    refresh();
    results.replaceChildren();
    try {
      const out = await drive({
        runner,
        source,
        ids: p.ids,
        tokens: p.tokens,
        tolerance: tolerance(),
        onProgress: (s, n) => {
          note.textContent = s < n ? `Your function is computing word ${s + 1} of ${n}…` : "Done.";
        },
      });
      const agree = out.top.mine.map((t) => t.id).join() === out.top.model.map((t) => t.id).join();
      note.textContent =
        out.same && agree
          ? "Your attention and the model's own give the same next words and the same continuation."
          : "Your attention makes the model write something other than its own attention does.";
      results.replaceChildren(
        ...[
          el(
            "div",
            { class: "mha-build__tops" },
            table("With your attention", out.top.mine),
            table("The model's own", out.top.model),
          ),
          el(
            "p",
            {},
            el("strong", { text: "Your attention continues: " }),
            `${p.text} `,
            el("em", { text: out.mine.join(" ") }),
          ),
          el(
            "p",
            {},
            el("strong", { text: "The model's own: " }),
            `${p.text} `,
            el("em", { text: out.model.join(" ") }),
          ),
          out.question
            ? el(
                "details",
                { class: "mha-build__why" },
                el("summary", {
                  text: "Your update rows differ from the model's in every row but the last, yet nothing changed. Why?",
                }),
                el("p", {
                  text:
                    "Only the final row feeds the prediction: the hidden layer and the vocabulary head read the last slot alone. " +
                    "Without the mask, every earlier receiver also reads the tokens after it, so its row changes; the last receiver has no later " +
                    "tokens to read, so its row, and the next word, stay the same. In training, though, every row predicts its own next word, and " +
                    "a row that could read the answer would learn nothing.",
                }),
              )
            : null,
        ].filter(Boolean),
      );
      return out;
    } catch (err) {
      note.textContent = `Your attention could not drive the model: ${errorText(err)}`;
      throw err;
    } finally {
      busy = false;
      onBusy(false);
      refresh();
    }
  }
  button.addEventListener("click", () => run().catch(() => {}));
  return { block, refresh, run };
}
