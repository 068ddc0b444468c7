// A byte-pair encoder that reads Hugging Face tokenizers' own JSON
// (wasm_assets/bpe_tokenizer.json, written by export/lesson/subwords.py) and
// encodes text the way tokenizers does for that file:
//
// 1. Added tokens ("[UNK]") are found in the raw text first and kept whole.
// 2. The normaliser: NFKC, then lowercase (the pipeline's Sequence of the two).
// 3. The Whitespace pre-tokenizer: pieces are runs of word characters (\w, as
//    Rust's Unicode regex defines it) or runs of other non-space characters.
// 4. Per piece, BPE: start from its characters (a character outside the
//    vocabulary becomes the unknown token), then merge the adjacent pair with
//    the lowest merge rank, leftmost first, until no pair has a rank.
//
// Only what that file uses is implemented; anything else is refused by name,
// so a different tokenizer.json fails loudly instead of encoding differently.
// tests/test_bpe_node.py compares it with tokenizers on thousands of texts.

const WORD = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}";
const PIECES = new RegExp(`[${WORD}]+|[^${WORD}\\p{White_Space}]+`, "gu");

function check(cond, what) {
  if (!cond) throw new Error(`bpe_tokenizer.json: ${what} is not supported by this page's encoder`);
}

function normaliser(spec) {
  const steps = spec ? (spec.type === "Sequence" ? spec.normalizers : [spec]) : [];
  const fns = steps.map((n) => {
    if (n.type === "NFKC") return (s) => s.normalize("NFKC");
    if (n.type === "Lowercase") return (s) => s.toLowerCase();
    check(false, `the normalizer ${n.type}`);
    return null;
  });
  return (s) => fns.reduce((acc, f) => f(acc), s);
}

export class BPE {
  constructor(json) {
    check(json && json.model && json.model.type === "BPE", "a model that is not BPE");
    const m = json.model;
    check(!m.dropout, "dropout");
    check(!m.continuing_subword_prefix && !m.end_of_word_suffix, "a subword prefix or suffix");
    check(!m.byte_fallback && !m.fuse_unk, "byte fallback or fused unknowns");
    check(
      !json.pre_tokenizer || json.pre_tokenizer.type === "Whitespace",
      `the pre-tokenizer ${json.pre_tokenizer && json.pre_tokenizer.type}`,
    );
    this.vocab = new Map(Object.entries(m.vocab));
    this.unk = m.unk_token ?? null;
    this.ignoreMerges = Boolean(m.ignore_merges);
    this.ranks = new Map();
    m.merges.forEach((pair, rank) => {
      const [a, b] = Array.isArray(pair) ? pair : pair.split(" ");
      this.ranks.set(`${a}\u0000${b}`, rank);
    });
    this.normalise = normaliser(json.normalizer);
    this.added = (json.added_tokens || [])
      .map((t) => t.content)
      .filter((c) => c)
      .sort((a, b) => b.length - a.length);
  }

  // The BPE pieces of one pre-tokenized word.
  word(piece) {
    if (this.ignoreMerges && this.vocab.has(piece)) return [piece];
    let parts = [];
    for (const ch of piece) {
      if (this.vocab.has(ch)) parts.push(ch);
      else if (this.unk !== null) parts.push(null); // an unknown character: the unknown token, never merged
    }
    for (;;) {
      let best = -1;
      let bestRank = Infinity;
      for (let i = 0; i + 1 < parts.length; i++) {
        if (parts[i] === null || parts[i + 1] === null) continue;
        const rank = this.ranks.get(`${parts[i]}\u0000${parts[i + 1]}`);
        if (rank !== undefined && rank < bestRank) {
          bestRank = rank;
          best = i;
        }
      }
      if (best < 0) break;
      parts = [...parts.slice(0, best), parts[best] + parts[best + 1], ...parts.slice(best + 2)];
    }
    return parts.map((p) => (p === null ? this.unk : p));
  }

  // Text -> the pieces tokenizers gives (encode(text).tokens).
  tokens(text) {
    const out = [];
    for (const [chunk, isAdded] of this.splitAdded(String(text))) {
      if (isAdded) {
        out.push(chunk);
        continue;
      }
      for (const piece of this.normalise(chunk).match(PIECES) || []) out.push(...this.word(piece));
    }
    return out;
  }

  ids(text) {
    return this.tokens(text).map((t) => this.vocab.get(t));
  }

  // The raw text cut around added tokens (matched before normalisation, longest first).
  splitAdded(text) {
    if (!this.added.length) return [[text, false]];
    const chunks = [];
    let rest = text;
    while (rest) {
      let at = -1;
      let hit = "";
      for (const t of this.added) {
        const i = rest.indexOf(t);
        if (i >= 0 && (at < 0 || i < at)) {
          at = i;
          hit = t;
        }
      }
      if (at < 0) {
        chunks.push([rest, false]);
        break;
      }
      if (at > 0) chunks.push([rest.slice(0, at), false]);
      chunks.push([hit, true]);
      rest = rest.slice(at + hit.length);
    }
    return chunks;
  }
}
