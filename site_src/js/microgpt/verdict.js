// The exercise's verdict, decided here on the page and never in Python.
//
// The page computes microgpt's answers itself, in its own thread, from the
// weights it already loads (microgpt/model.js, the model that draws the
// heatmaps, checked against export/microgpt in the tests): exerciseCases()
// below is the twin of export.microgpt.site.exercise_cases. No file the site
// serves holds the answers. The worker only gets the inputs (inputsOf); it
// sends back the numbers the learner's multi_head returned for each case. An
// answer passes only when every number equals microgpt's within the relative
// tolerance and Python had nothing to object to, so nothing the learner's
// code sends can make a wrong answer pass.

import { forwardAttention } from "./model.js";

// The names whose every position is a case (export/microgpt/site.py CASE_NAMES; a test keeps them equal).
export const CASE_NAMES = ["emma", "kristopher", "olivia", "zoe"];
// Relative tolerance: any order of summation passes, a different computation
// does not (the smallest real mistake is off by more than 1e-4).
export const TOLERANCE = 1e-9;

// Every position of every name: inputs, microgpt's glued heads and attn_wo's output.
export function exerciseCases(model, names = CASE_NAMES) {
  const nHead = model.config.n_head;
  const cases = [];
  for (const name of names) {
    const run = forwardAttention(model, name, nHead);
    run.q.forEach((q, pos) => {
      cases.push({
        name,
        pos,
        q,
        keys: run.keys.slice(0, pos + 1),
        values: run.values.slice(0, pos + 1),
        expected: run.heads_out[pos],
        after_wo: run.attn_out[pos],
      });
    });
  }
  return {
    n_head: nHead,
    head_dim: model.config.head_dim,
    tolerance: TOLERANCE,
    names: [...names],
    attn_wo: model.weights["layer0.attn_wo"],
    cases,
  };
}

// What the worker needs: the inputs, not the answers.
export function inputsOf(doc) {
  return {
    n_head: doc.n_head,
    head_dim: doc.head_dim,
    attn_wo: doc.attn_wo,
    cases: doc.cases.map(({ name, pos, q, keys, values }) => ({ name, pos, q, keys, values })),
  };
}

function close(got, want, tolerance) {
  return (
    typeof got === "number" && Number.isFinite(got) && Math.abs(got - want) <= tolerance * Math.max(1, Math.abs(want))
  );
}

function matches(out, want, tolerance) {
  if (!Array.isArray(out) || out.length !== want.length) return false;
  for (let i = 0; i < want.length; i++) if (!close(out[i], want[i], tolerance)) return false;
  return true;
}

function linear(vec, mat) {
  return mat.map((row) => row.reduce((acc, w, j) => acc + w * vec[j], 0));
}

export function where(c) {
  const what = c.pos ? `letter '${c.name[c.pos - 1]}'` : "the start marker";
  return `"${c.name}" at position ${c.pos} (${what})`;
}

// {passed, wrong}: wrong is the index of the first case whose numbers differ (or -1).
// `result` is what the worker collected: {outputs, failed, stop}.
export function judge(doc, result) {
  const outputs = result && Array.isArray(result.outputs) ? result.outputs : [];
  const wrong = doc.cases.findIndex((c, i) => !matches(outputs[i], c.expected, doc.tolerance));
  const quiet = Boolean(result) && !result.failed && !result.stop;
  if (wrong >= 0 || !quiet || outputs.length !== doc.cases.length) return { passed: false, wrong };
  // The glued heads are microgpt's, so attn_wo must give microgpt's numbers too.
  const mixedWrong = doc.cases.findIndex((c, i) => !matches(linear(outputs[i], doc.attn_wo), c.after_wo, 1e-9));
  return { passed: mixedWrong < 0, wrong: mixedWrong };
}

export function passMessage(doc) {
  const last = doc.cases.filter((c) => c.name === doc.names[0]).pop();
  const shown = last.after_wo.map((v) => v.toFixed(3)).join(", ");
  return (
    `Passed! multi_head gives microgpt's numbers at all ${doc.cases.length} positions of ${doc.names.join(", ")}, ` +
    `and after attn_wo the ${last.after_wo.length} numbers match too. For the last letter of "${last.name}", ` +
    `attn_wo turns your four heads into [${shown}].`
  );
}

// The message for a failed check: Python's explanation when it gave one.
export function failMessage(doc, result, verdict) {
  const said = result && typeof result.message === "string" ? result.message.slice(0, 4000) : "";
  if (said) return said;
  const c = doc.cases[Math.max(0, verdict.wrong)];
  return `Your numbers differ from microgpt's at ${where(c)}.`;
}
