// One run of the compare page: every running model continues the same
// history with runtime/generate.js's Generation, one token per model in
// turn, so the columns grow side by side.

import { panel } from "../runtime/dom.js";
import { Generation } from "../runtime/generate.js";
import { detokenize } from "../runtime/tokenizer.js";
import { showTiming, showToken } from "./columns.js";

// Lets the browser paint and handle clicks (Stop) between tokens, without
// the 4 ms clamp of setTimeout.
const yieldToBrowser = () =>
  new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => resolve();
    channel.port2.postMessage(null);
  });

// Resolves to {name: {generation, steps, totalMs, error}} for the models that ran;
// onStart(states) receives the same object before the first step, so tokens
// can be inspected while the run goes on. isCurrent() turns false when the run
// is stopped or the page goes away.
export async function generateColumns({ models, view, vocab, history, options, isCurrent, onSelect, onStart }) {
  const states = {};
  for (const name of Object.keys(models.runners)) {
    states[name] = {
      generation: new Generation(history, { ...options, T: models.T, special: vocab.special }),
      steps: [],
      totalMs: 0,
      error: null,
    };
  }
  if (onStart) onStart(states);
  const active = () => Object.entries(states).filter(([, s]) => !s.error && !s.generation.done);
  while (isCurrent()) {
    const pending = active();
    if (!pending.length) break;
    for (const [name, state] of pending) {
      if (!isCurrent()) break;
      await advance(name, state, { models, view, vocab, onSelect });
    }
    if (!isCurrent()) break;
    await yieldToBrowser();
  }
  return states;
}

async function advance(name, state, { models, view, vocab, onSelect }) {
  const col = view.columns[name];
  let step;
  try {
    step = await state.generation.step((w) => models.runners[name].run(w));
  } catch (err) {
    let error = err;
    const runner = models.runners[name];
    if (runner && runner.backend === "webgpu" && !models.closed) {
      // WebGPU failed mid-story: continue this model on WebAssembly.
      view.addNotice(`WebGPU failed for ${col.label} while generating (${err.message}); switched it to WebAssembly.`);
      try {
        await models.switchToWasm(name);
        return advance(name, state, { models, view, vocab, onSelect });
      } catch (err2) {
        error = err2;
      }
    }
    state.error = error.message;
    models.errors[name] = error.message;
    col.problem.replaceChildren(panel("error", "Generation stopped.", `${col.label}: ${error.message}.`));
    return;
  }
  state.totalMs += step.ms;
  state.steps.push(step);
  showToken(col, step, vocab, onSelect);
  showTiming(col, { steps: state.steps.length, totalMs: state.totalMs }, false);
}

// Once a run ends (or is stopped): each column's final timing, and {name: result}
// for the page's record of the run (window.mhaCompare.lastRun).
export function finishColumns(states, { models, view, vocab }) {
  const results = {};
  for (const [name, state] of Object.entries(states)) {
    const g = state.generation;
    const tokens = vocab.decode(g.ids);
    const n = state.steps.length;
    results[name] = {
      ids: [...g.ids],
      tokens,
      text: detokenize(tokens),
      ended_with_eos: g.endedWithEos,
      backend: models.runners[name]?.backend ?? null,
      ms_per_token: n ? state.totalMs / n : null,
      total_ms: state.totalMs,
      error: models.errors[name] ?? null,
    };
    showTiming(view.columns[name], { steps: n, totalMs: state.totalMs, endedWithEos: g.endedWithEos }, true);
  }
  return results;
}

// {name: {logits, attention} | {error}} for one step's window: the chosen
// model's own output, and every other running model run on the same window.
export async function outputsForStep(modelList, runners, name, step) {
  const outputs = {};
  await Promise.all(
    modelList.map(async ({ name: other }) => {
      if (other === name) outputs[other] = step.output;
      else if (runners[other]) {
        try {
          outputs[other] = await runners[other].run(step.window);
        } catch (err) {
          outputs[other] = { error: err.message };
        }
      }
    }),
  );
  return outputs;
}
