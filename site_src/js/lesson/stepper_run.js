// One prompt through the stepper's teaching graph (page 4): the run every step reads.
// Every number a step shows is an output of that graph (see stepper_steps.js); this only
// tokenizes, as the compare page does, and takes the softmax of the logits to show
// probabilities, as the generator does.

import { contextWindow, dropped } from "../runtime/context.js";
import { probabilities, promptHistory, topK } from "../runtime/generate.js";
import { serial } from "../runtime/ort.js";
import { tokenize } from "../runtime/tokenizer.js";

export const MAX_PROMPT_CHARS = 2000;

export function tokenText(vocab, id) {
  const s = vocab.special;
  if (id === s.BOS) return "BOS";
  if (id === s.EOS) return "[end]";
  if (id === s.UNK) return "UNK";
  if (id === s.PAD) return "PAD";
  return vocab.itos[id];
}

// basics: stepper_load.js's loadBasics(); graph: its createSession(model); host: the widget's
// root, whose CSS gives the steps their colours.
export async function runPrompt(basics, graph, model, text, host) {
  const { vocab, code, T } = basics;
  const { ort, session } = graph;
  text = String(text).slice(0, MAX_PROMPT_CHARS);
  const history = promptHistory(vocab, text);
  const tokens = tokenize(text);
  const ids = contextWindow(history, T, vocab.special.PAD);
  const feed = new BigInt64Array(T);
  ids.forEach((id, i) => {
    feed[i] = BigInt(id);
  });
  const t0 = performance.now();
  const out = await serial(() => session.run({ ids: new ort.Tensor("int64", feed, [1, T]) }));
  const ms = performance.now() - t0;
  const tensors = {};
  for (const [name, tensor] of Object.entries(out))
    tensors[name] = { dims: tensor.dims.map(Number), data: tensor.data };
  // The words of each slot as the learner typed them (an unknown word keeps its spelling).
  const words = [{ text: "BOS", unknown: false }, ...tokens.map((t) => ({ text: t, unknown: !vocab.stoi.has(t) }))];
  const slotWords = contextWindow(words, T, null);
  const real = [];
  ids.forEach((id, s) => {
    if (id !== vocab.special.PAD) real.push(s);
  });
  const H = model.heads;
  const d = tensors.E.dims[2];
  const dh = tensors.Q.dims[3];
  const at4 = (name) => {
    const { data } = tensors[name];
    const [, , b, c] = tensors[name].dims;
    return (i, j, k) => data[(i * b + j) * c + k];
  };
  const at3 = (name) => {
    const { data } = tensors[name];
    const c = tensors[name].dims[2];
    return (j, k) => data[j * c + k];
  };
  const mask = tensors.mask.data;
  const logits = tensors.logits.data;
  const excluded = basics.excluded;
  const probs = probabilities(logits, excluded);
  return {
    label: model.label,
    name: model.name,
    ms,
    text,
    tokens,
    ids,
    words: slotWords,
    real,
    n: real.length,
    T,
    C: vocab.C,
    H,
    d,
    dh,
    hidden: tensors.hidden.dims[1],
    final: T - 1,
    special: vocab.special,
    dropped: dropped(history, T),
    labels: real.map((s) => (slotWords[s] ? slotWords[s].text : tokenText(vocab, ids[s]))),
    tensors,
    logits,
    probs,
    top: topK(probs, 5),
    excluded,
    code,
    host,
    tokenText: (id) => tokenText(vocab, id),
    t: {
      token_rows: at3("token_rows"),
      position_rows: at3("position_rows"),
      E: at3("E"),
      joined: at3("joined"),
      update: at3("update"),
      updated: at3("updated"),
      Q: at4("Q"),
      K: at4("K"),
      V: at4("V"),
      scores: at4("scores"),
      A: at4("A"),
      messages: at4("messages"),
      head_parts: at4("head_parts"),
      wo_bias: (i) => tensors.wo_bias.data[i],
      mask: (a, b) => Boolean(mask[a * T + b]),
      hidden: (i) => tensors.hidden.data[i],
    },
  };
}
