// One run of the compare page: every running model continues the same
// history with runtime/generate.js's Generation, one token per model in
// turn, so the columns grow side by side.

import { panel } from "../runtime/dom.js";
import { Generation } from "../runtime/generate.js";
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
