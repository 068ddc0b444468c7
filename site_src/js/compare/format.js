// How the compare page writes sizes, times and tokens.

export function formatBytes(n) {
  if (!(n > 0)) return "0 kB";
  return n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${Math.max(1, Math.round(n / 1e3))} kB`;
}

export function formatMs(ms) {
  if (!Number.isFinite(ms)) return "–";
  return ms >= 100 ? `${Math.round(ms)} ms` : ms >= 10 ? `${ms.toFixed(1)} ms` : `${ms.toFixed(2)} ms`;
}

// A vocabulary entry as the learner should read it: the special markers in words.
export function tokenText(vocab, id) {
  const s = vocab.special;
  if (id === s.BOS) return "⟨start⟩";
  if (id === s.EOS) return "[end of story]";
  if (id === s.UNK) return "⟨unknown⟩";
  if (id === s.PAD) return "⟨padding⟩";
  return vocab.itos[id];
}

// The words to show for an error. The runtime's loaders (runtime/assets.js,
// runtime/ort_engine.js) give a failure that is not the model's fault a message that
// names the file and, as err.advice, what the learner can do; then that is
// said once, as it is. Otherwise the page's own sentence (which quotes
// err.message) is used.
export function learnerMessage(err, fallback) {
  if (err && typeof err.advice === "string" && err.advice) {
    // Not capitalised: the runtime's messages start with the file they name.
    const text = String(err.message || "").replace(/\.$/, "");
    return `${text}. ${err.advice}`;
  }
  return fallback;
}
