// The word-and-punctuation tokenizer of export/wordlm.py (rules "wordlm-1"),
// repeated exactly so the browser and the training code read text the same way.
//
// 1. NFKC, then lowercase.  2. Curly quotes become straight ones.
// 3. Python-whitespace separates tokens; other category C characters vanish.
// 4. A token is a run of letters/digits (Python's str.isalnum, i.e. Unicode
//    categories L* and N*); an apostrophe between two such characters joins them.
// 5. Any other character is a token of its own.
// Strings are walked by code point, as Python walks a str.
//
// The rules follow the Unicode version of the Python that built the
// vocabulary; this browser knows a newer one. Python files a character its
// tables do not assign under category Cn and drops it, and NFKC leaves it
// alone, so the text on either side of it is normalised as two pieces. The
// table of those code points comes from Python (unicode_unassigned.js), so
// both sides drop the same ones, whatever this browser's Unicode is.

import { UNASSIGNED, UNICODE_VERSION } from "./unicode_unassigned.js";

export const RULES_VERSION = "wordlm-1";
export { UNICODE_VERSION };

const QUOTES = new Map([
  ["\u2018", "'"],
  ["\u2019", "'"],
  ["\u201c", '"'],
  ["\u201d", '"'],
]);

// Exactly the code points for which Python's str.isspace() is true.
const PY_SPACE = new Set([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003,
  0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);
const ALNUM = /^[\p{L}\p{N}]$/u;
const OTHER = /^\p{C}$/u; // Cc, Cf, Cs, Co, Cn

export function isSpace(ch) {
  return PY_SPACE.has(ch.codePointAt(0));
}

export function isAlnum(ch) {
  return ALNUM.test(ch);
}

function isDropped(ch) {
  return OTHER.test(ch) && !isSpace(ch);
}

export function isUnassigned(codePoint) {
  let lo = 0;
  let hi = UNASSIGNED.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (codePoint < UNASSIGNED[2 * mid]) hi = mid - 1;
    else if (codePoint > UNASSIGNED[2 * mid + 1]) lo = mid + 1;
    else return true;
  }
  return false;
}

function normalise(text) {
  let out = "";
  let piece = "";
  const flush = () => {
    for (const ch of piece.normalize("NFKC").toLowerCase()) {
      const mapped = QUOTES.get(ch) ?? ch;
      if (!isDropped(mapped)) out += mapped;
    }
    piece = "";
  };
  for (const ch of String(text)) {
    if (isUnassigned(ch.codePointAt(0)))
      flush(); // dropped, and a boundary for NFKC
    else piece += ch;
  }
  flush();
  return out;
}

export function tokenize(text) {
  const chars = Array.from(normalise(text)); // one entry per code point
  const tokens = [];
  let word = "";
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i];
    if (isAlnum(ch)) {
      word += ch;
    } else if (ch === "'" && word && i + 1 < chars.length && isAlnum(chars[i + 1])) {
      word += ch; // inner apostrophe: can't, lily's
    } else {
      if (word) {
        tokens.push(word);
        word = "";
      }
      if (!isSpace(ch)) tokens.push(ch);
    }
  }
  if (word) tokens.push(word);
  return tokens;
}

const CLOSING = new Set([".", ",", "!", "?", ";", ":", ")", "'"]);

// Readable text from tokens, as export.wordlm.detokenize joins them.
export function detokenize(tokens) {
  let out = "";
  for (const tok of tokens) {
    if (!out) out = tok;
    else if (CLOSING.has(tok) || out.endsWith("(")) out += tok;
    else out += " " + tok;
  }
  return out;
}

export class Vocabulary {
  constructor(json) {
    if (!json || !Array.isArray(json.itos)) throw new Error("vocab.json has no itos list");
    if (json.rules_version && json.rules_version !== RULES_VERSION) {
      throw new Error(`vocab.json uses tokenizer rules ${json.rules_version}, this page implements ${RULES_VERSION}`);
    }
    if (json.unicode_version && json.unicode_version !== UNICODE_VERSION) {
      throw new Error(
        `vocab.json was built with Unicode ${json.unicode_version}, this page's tokenizer table is Unicode ${UNICODE_VERSION}`,
      );
    }
    // T and the special ids come from the pipeline (vocab.json), never from a default typed here.
    if (!Number.isInteger(json.T) || !json.special) {
      throw new Error(
        "vocab.json gives no context length T or special token ids: rebuild it with `python -m export vocab`",
      );
    }
    this.itos = json.itos;
    this.C = json.C ?? json.itos.length;
    this.T = json.T;
    this.special = json.special;
    this.stoi = new Map(json.itos.map((t, i) => [t, i]));
  }

  encodeTokens(tokens) {
    return tokens.map((t) => this.stoi.get(t) ?? this.special.UNK);
  }

  encode(text) {
    return this.encodeTokens(tokenize(text));
  }

  decode(ids) {
    return ids.map((i) => this.itos[i]);
  }
}
