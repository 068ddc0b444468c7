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
