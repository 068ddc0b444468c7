// The operations of forward_full, one step each, for page 4's stepper, in the order the
// model computes them.
//
// A step is {key, title, map, shape(run), code, draw(run, view, state)}:
//   map: the boxes of page 4's model map (site_src/hooks/lesson_figures/model.py,
//     ids "map-<key>") that the step is at;
//   code: sections "file#name" of the site's code (site_src/hooks/stepper_code.py);
//   draw fills view.picture and returns {sentence, numbers, alt}: one sentence,
//     the few numbers it is about (label, value), and the picture's text
//     alternative with the main numbers.
// A step with predict: true also gets the guess of stepper_predict.js before its numbers show.
// `run` holds one prompt's tensors as the teaching graph computed them
// (stepper_run.js): nothing in the steps computes a tensor, they only read and draw.

import { ATTENTION_STEPS } from "./stepper_steps_attention.js";
import { INPUT_STEPS } from "./stepper_steps_input.js";
import { OUTPUT_STEPS } from "./stepper_steps_output.js";

const STEPS = [...INPUT_STEPS, ...ATTENTION_STEPS, ...OUTPUT_STEPS];

export function steps() {
  return STEPS;
}
