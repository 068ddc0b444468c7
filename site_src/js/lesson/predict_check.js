// Lesson page 2: predict, then check.
//
//   <div data-mha-widget="predict_check" data-head="1" data-receiver="1" data-source="0"></div>
//
// Before the page's tables, the learner computes four cells of the worksheet by
// hand: one score (q · k / √2 from the two short vectors shown), one softmax
// weight, one coordinate of the head's message and one coordinate of the update
// concat · W_O (before the residual adds E). Each answer is checked against wasm_assets/worksheet.json (never a
// typed number) within TOLERANCE. A wrong answer gets a hint that names the step
// that went wrong (recognised slips: the dot product without √2, an exponential
// never divided, the other coordinate, a row of W_O instead of a column...);
// a second wrong answer, or "Show the worked cell", shows the worked cell. The
// next step opens when a step is right or shown; each step is given the exact
// inputs, so one slip does not carry into the next.

import { claim, failedPanel, holds, release } from "../runtime/widget.js";
import { el, fmt, loadWorksheet, uid } from "./worksheet_ui.js";

export const TOLERANCE = 0.01;
const near = (a, b, tol = TOLERANCE) => Math.abs(a - b) <= tol;
const f3 = (x) => fmt(x, 3);
// Subscript digits: s₀ is the score of source 0 (sources count from 0, as on pages 1–4).
const sub = (n) => String(n).replace(/\d/g, (c) => String.fromCharCode(0x2080 + Number(c)));

// "−0,97", "-.97", "−0.974 " -> -0.974; anything else -> NaN.
export function parseNumber(text) {
  const s = String(text)
    .trim()
    .replace(/[\u2212\u2013]/g, "-")
    .replace(",", ".");
  return /^[-+]?(\d+\.?\d*|\.\d+)$/.test(s) ? Number(s) : Number.NaN;
}

// The four steps, each with its exact answer, its worked cell and the slips it recognises.
export function steps(ws, head, receiver, source) {
  const q = ws.Q[head][receiver];
  const sources = ws.mask[receiver].map((m, j) => (m === 1 ? j : -1)).filter((j) => j >= 0);
  const k = ws.K[head][source];
  const root2 = Math.sqrt(ws.head_dim);
  const d = q[0] * k[0] + q[1] * k[1];
  const scores = sources.map((j) => ws.scores[head][receiver][j]);
  const score = ws.scores[head][receiver][source];
  const weights = sources.map((j) => ws.A[head][receiver][j]);
  const weight = ws.A[head][receiver][source];
  const values = sources.map((j) => ws.V[head][j]);
  const message = ws.H[head][receiver];
  const concat = ws.concat[receiver];
  const col = 0;
  const woCol = ws.W_O.map((row) => row[col]);
  const update = ws.update[receiver][col];
  const tok = (j) => `“${ws.tokens[j]}” (${j})`;
  const other = sources.filter((j) => j !== source);
  const exps = scores.map(Math.exp);
  const hname = `head ${head + 1}`;
  const offset = head * ws.head_dim;
  return [
    {
      key: "score",
      title: `1. The score of source ${source} for receiver ${receiver}`,
      given: [
        `${hname}’s query of receiver ${tok(receiver)}: q = (${f3(q[0])}, ${f3(q[1])})`,
        `its key of source ${tok(source)}: k = (${f3(k[0])}, ${f3(k[1])})`,
      ],
      ask: "score = q · k / √2 =",
      answer: score,
      worked: `(${f3(q[0])} × ${f3(k[0])} + ${f3(q[1])} × ${f3(k[1])}) / √2 = ${f3(d)} / ${f3(root2)} = ${f3(score)}`,
      slips: [
        [
          d,
          "That is the dot product q · k: the score then divides it by √2 ≈ 1.414 (the square root of the head width).",
        ],
        [d / 2, "Divide by √2 ≈ 1.414, the square root of the head width 2, not by 2."],
        [-score, "Check the signs of the two products: a negative times a negative is positive."],
        [(q[0] * k[0]) / root2, "Add both products, q₁k₁ + q₂k₂, before dividing by √2."],
        [(q[1] * k[1]) / root2, "Add both products, q₁k₁ + q₂k₂, before dividing by √2."],
      ],
      hint: "Multiply the matching coordinates of q and k, add the two products, then divide by √2.",
    },
    {
      key: "weight",
      title: `2. The weight of source ${source}`,
      given: [
        `receiver ${receiver} may read ${sources.length} sources (${sources.map(tok).join(", ")}); their scores: ` +
          sources.map((j, i) => `s${sub(j)} = ${f3(scores[i])}`).join(", "),
      ],
      ask: `weight of source ${source} = softmax of the scores, at source ${source} =`,
      answer: weight,
      worked:
        `e^${f3(score)} / (${scores.map((s) => `e^${f3(s)}`).join(" + ")}) = ${f3(Math.exp(score))} / ` +
        `${f3(exps.reduce((a, b) => a + b, 0))} = ${f3(weight)}`,
      slips: [
        [
          Math.exp(score),
          "That is the exponential e^score: divide it by the sum of the exponentials of all the allowed scores.",
        ],
        ...other.map((j) => [
          ws.A[head][receiver][j],
          `That is the weight of source ${j}; the question asks for source ${source}.`,
        ]),
        [
          score / scores.reduce((a, b) => a + b, 0),
          "Take the exponential of each score first, then divide by their sum.",
        ],
      ],
      hint: "The softmax takes e^score of every allowed source and divides each by their total.",
    },
    {
      key: "message",
      title: `3. Coordinate 1 of ${hname}’s message`,
      given: [
        `the weights: ${sources.map((j, i) => `${f3(weights[i])} on ${j}`).join(", ")}`,
        ...sources.map((j, i) => `value row of source ${tok(j)}: v = (${f3(values[i][0])}, ${f3(values[i][1])})`),
      ],
      ask: "coordinate 1 of the message = Σ weight × v₁ =",
      answer: message[0],
      worked: `${sources.map((j, i) => `${f3(weights[i])} × ${f3(values[i][0])}`).join(" + ")} = ${f3(message[0])}`,
      slips: [
        [message[1], "That is coordinate 2 of the message; take the first number of each value row."],
        [
          values.reduce((a, v) => a + v[0], 0) / values.length,
          "Weigh each value row by its weight instead of averaging them.",
        ],
        [values.reduce((a, v) => a + v[0], 0), "Multiply each value by its source's weight before adding."],
        [
          weights[sources.indexOf(source)] * values[sources.indexOf(source)][0],
          "Add the other sources' shares too: the message sums over every allowed source.",
        ],
      ],
      hint: "The message is the weighted sum of the value rows: multiply each source's value by its weight and add.",
    },
    {
      key: "output",
      title: `4. Coordinate 1 of the update concat · W_O for receiver ${receiver} (before the residual adds E)`,
      given: [
        `the joined messages [H₁ | H₂] of receiver ${receiver}: (${concat.map(f3).join(", ")})` +
          ` (${hname}’s message is coordinates ${offset + 1}–${offset + ws.head_dim})`,
        `column 1 of W_O: (${woCol.map((x) => fmt(x, 1)).join(", ")})`,
      ],
      ask: "coordinate 1 of concat × W_O =",
      answer: update,
      worked: `${concat.map((c, i) => `${f3(c)} × ${fmt(woCol[i], 1)}`).join(" + ")} = ${f3(update)}`,
      slips: [
        [
          concat.reduce((a, c, i) => a + c * ws.W_O[col][i], 0),
          "You used row 1 of W_O: coordinate 1 of the update takes column 1 (one entry per joined coordinate).",
        ],
        [
          concat.slice(0, ws.head_dim).reduce((a, c, i) => a + c * woCol[i], 0),
          "Both heads' messages count: use all four joined coordinates.",
        ],
        [
          ws.output[receiver][col],
          "That adds E back (the residual, the next step); the question asks for the update before it.",
        ],
      ],
      hint: "Coordinate 1 of a row times a matrix pairs the row's entries with the matrix's first column and adds the products.",
    },
  ];
}

// The hint for a wrong answer: a recognised slip, else the step's general hint.
export function diagnose(step, value) {
  const slip = step.slips.find(([v]) => Number.isFinite(v) && near(value, v) && !near(v, step.answer));
  return slip ? slip[1] : step.hint;
}

const state = new Map();

function stepView(step, onDone) {
  const id = uid("mha-pc");
  const input = el("input", {
    type: "text",
    inputmode: "decimal",
    id: `${id}-in`,
    class: "mha-pc__input",
    autocomplete: "off",
    spellcheck: false,
    "aria-describedby": `${id}-fb`,
  });
  const check = el("button", { type: "submit", class: "md-button md-button--primary mha-pc__check", text: "Check" });
  const show = el("button", { type: "button", class: "md-button mha-pc__show", text: "Show the worked cell" });
  const feedback = el("p", { class: "mha-pc__feedback", id: `${id}-fb`, role: "status", "aria-live": "polite" });
  const worked = el(
    "p",
    { class: "mha-pc__worked", hidden: true },
    el("strong", { text: "Worked: " }),
    el("span", { class: "mha-pc__work", text: step.worked }),
  );
  const form = el(
    "form",
    { class: "mha-pc__step", novalidate: true, "data-step": step.key },
    el("p", { class: "mha-pc__title", text: step.title }),
    el(
      "ul",
      { class: "mha-pc__given" },
      step.given.map((g) => el("li", { text: g })),
    ),
    el(
      "div",
      { class: "mha-pc__row" },
      el("label", { for: input.id, class: "mha-pc__ask", text: step.ask }),
      input,
      check,
      show,
    ),
    feedback,
    worked,
  );
  let wrong = 0;
  let done = false;
  const finish = (how) => {
    worked.hidden = false;
    show.hidden = true;
    form.dataset.state = how;
    if (!done) {
      done = true;
      onDone();
    }
  };
  const say = (result, text) => {
    feedback.dataset.result = result;
    feedback.textContent = text;
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const value = parseNumber(input.value);
    if (!Number.isFinite(value)) {
      say("none", "Type a number, for example −0.5 or 0.25.");
      input.focus();
      return;
    }
    if (near(value, step.answer)) {
      say("correct", `Right: ${f3(step.answer)} (answers within ${TOLERANCE} count).`);
      finish("correct");
      return;
    }
    wrong += 1;
    const hint = diagnose(step, value);
    if (wrong === 1 && !done) {
      say("hint", `Not yet. ${hint} Try again.`);
      input.select();
      return;
    }
    say("wrong", `Not quite: the cell is ${f3(step.answer)}. ${hint}`);
    finish("shown");
  });
  show.addEventListener("click", () => {
    say("shown", `The cell is ${f3(step.answer)}.`);
    finish("shown");
  });
  return { form, input };
}

export async function mount(root) {
  const entry = claim(state, root);
  if (!entry) return;
  let ws;
  try {
    ws = await loadWorksheet();
  } catch (err) {
    root.replaceChildren(failedPanel("The predict-then-check exercise could not get its numbers", err));
    return;
  }
  if (!holds(state, root, entry)) return;
  const head = Number.parseInt(root.dataset.head || "1", 10) - 1;
  const receiver = Number.parseInt(root.dataset.receiver || "1", 10);
  const source = Number.parseInt(root.dataset.source || "0", 10);
  const list = steps(ws, head, receiver, source);
  const box = el(
    "div",
    { class: "mha-pc" },
    el("p", {
      class: "mha-pc__intro",
      text:
        `Four cells of the worksheet, by hand (a calculator helps). ` +
        `Type each number; answers within ${TOLERANCE} of the exact value count.`,
    }),
  );
  const views = [];
  const open = (i) => {
    if (i >= views.length) {
      root.dataset.done = "true";
      return;
    }
    views[i].form.hidden = false;
  };
  list.forEach((step, i) => {
    const view = stepView(step, () => open(i + 1));
    view.form.hidden = i > 0;
    views.push(view);
    box.append(view.form);
  });
  root.replaceChildren(box);
  root.dataset.ready = "true";
}

export function dispose(root) {
  release(state, root, ["ready", "done"]);
}
