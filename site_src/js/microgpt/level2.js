// Level 2 of the microgpt exercise: the learner writes the whole multi_head.
//
// The level is one exercise file on the shared exercise runtime (as the build
// page's): pyodide/exercises/microgpt_multi_head.py states the starter, the
// worked body and the function its Check calls; its checks' words run in
// Python only after the learner's numbers are in (pyodide/calls.py). The
// Check calls the learner's multi_head on Level 1's cases (verdict.js), and
// the verdict is Level 1's: judged here, against microgpt's answers.

import { siteUrl } from "../runtime/assets.js";
import { el } from "../runtime/dom.js";
import { functionsOf, rawText } from "../runtime/exercise_file.js";
import { judge } from "./verdict.js";

export const LEVEL2_PATH = "pyodide/exercises/microgpt_multi_head.py";
const BUILD_PAGE = "lesson/build/";

export async function fetchText(path) {
  const response = await fetch(siteUrl(path));
  if (!response.ok) throw new Error(`${path} is missing on this site (HTTP ${response.status})`);
  return response.text();
}

// {starter, solution, functions} as the exercise file states them (the solution: the starter with its body written).
export function readLevel2(text) {
  const constant = (name) => rawText(text, name);
  const starter = constant("STARTER");
  const body = constant("BODY");
  const placeholder = (text.match(/^PLACEHOLDER = "(.*)\\n"$/m) || [])[1];
  const functions = functionsOf(text).map((f) => f.name);
  if (!starter || !body || !placeholder || !starter.includes(`${placeholder}\n`) || functions.length !== 1) {
    throw new Error(`${LEVEL2_PATH} does not state its starter, body and function`);
  }
  return { starter, solution: starter.replace(`${placeholder}\n`, body), function: functions[0] };
}

let file = null;
function exerciseFile() {
  if (!file) {
    file = fetchText(LEVEL2_PATH).then(readLevel2);
    file.catch(() => {
      file = null;
    });
  }
  return file;
}

// What the worker gets: the function to call and its arguments per case, not the answers; microgpt's
// glued heads go to the explanation only after the numbers are in, and only for a wrong answer.
export function level2Inputs(doc, name = "multi_head") {
  return {
    function: name,
    n_head: doc.n_head,
    head_dim: doc.head_dim,
    attn_wo: doc.attn_wo,
    calls: doc.cases.map((c) => [c.q, c.keys, c.values]),
    cases: doc.cases.map(({ name: who, pos }) => ({ name: who, pos })),
  };
}

export const level2 = {
  name: "Level 2",
  editorLabel: "Python code of Level 2: the whole multi_head",
  texts: () => exerciseFile(),
  ask: (doc) => ({
    inputs: level2Inputs(doc),
    explain: (collected) =>
      judge(doc, collected).passed
        ? false
        : { expected: JSON.stringify({ outputs: doc.cases.map((c) => c.expected) }) },
  }),
  solutionNote:
    "The solution is in the editor: read the body of multi_head, then press Check. (Ctrl+Z brings your own code back.)",
};

export function passMessage(doc) {
  return (
    `Passed! Your own multi_head, every line of it, gives microgpt's numbers at all ${doc.cases.length} positions ` +
    `of ${doc.names.join(", ")}, and after attn_wo too. It now stands beside microgpt's lines in "Unlocked in microgpt" below.`
  );
}

// Under a passed Level 2: where to go next.
export function passExtra() {
  return [
    el(
      "p",
      { class: "mgpt-level2__next" },
      "Next: ",
      el("a", { href: siteUrl(BUILD_PAGE), text: "build it yourself" }),
      " — causal multi-head attention, projections and W_O included, for the lesson's trained four-head " +
        "TinyStories model, checked against its own numbers.",
    ),
  ];
}
