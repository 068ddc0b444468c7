// How the exercise's Python memory snapshot is stored: its non-zero pages only.
//
// A Pyodide heap just after start-up is ~30 MB of which about half is 4 KiB
// pages of zeros. Dropping those halves what Cache Storage holds and what the
// page reads and hashes on every visit, in a few milliseconds each way; gzip
// would shrink it further (to ~6 MB) but costs ~0.2 s to inflate and ~0.7 s
// to deflate on the page's thread (bench/RESULTS.md).
//
// Layout (little-endian Uint32 words): MAGIC, PAGE, length of the snapshot in
// bytes, number of pages kept, that many page numbers in increasing order,
// then the pages themselves (the last one may be short).

const MAGIC = 0x6d686131; // "mha1"
const PAGE = 4096;
const WORDS = PAGE / 4;

export function packHeap(bytes) {
  if (bytes.byteLength % 4 || bytes.byteOffset % 4) throw new Error("a snapshot is a whole number of words");
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  const pages = Math.ceil(bytes.byteLength / PAGE);
  const kept = [];
  for (let page = 0; page < pages; page++) {
    const end = Math.min(words.length, (page + 1) * WORDS);
    for (let i = page * WORDS; i < end; i++) {
      if (words[i] !== 0) {
        kept.push(page);
        break;
      }
    }
  }
  const head = 4 + kept.length;
  let size = head * 4;
  for (const page of kept) size += Math.min(PAGE, bytes.byteLength - page * PAGE);
  const out = new Uint8Array(size);
  const index = new Uint32Array(out.buffer, 0, head);
  index.set([MAGIC, PAGE, bytes.byteLength, kept.length]);
  index.set(kept, 4);
  let at = head * 4;
  for (const page of kept) {
    const part = bytes.subarray(page * PAGE, Math.min(bytes.byteLength, (page + 1) * PAGE));
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

// The snapshot again, or an Error saying what is wrong with `packed`.
export function unpackHeap(packed) {
  if (!(packed instanceof Uint8Array) || packed.byteLength < 16 || packed.byteOffset % 4) {
    throw new Error("the saved Python heap is cut short");
  }
  const words = new Uint32Array(packed.buffer, packed.byteOffset, Math.floor(packed.byteLength / 4));
  const [magic, page, length, count] = words;
  if (magic !== MAGIC || page !== PAGE) throw new Error("the saved Python heap is in an unknown format");
  const head = 4 + count;
  if (words.length < head) throw new Error("the saved Python heap is cut short");
  const out = new Uint8Array(length);
  let at = head * 4;
  let last = -1;
  for (let k = 0; k < count; k++) {
    const number = words[4 + k];
    const start = number * PAGE;
    const size = Math.min(PAGE, length - start);
    if (number <= last || size <= 0 || at + size > packed.byteLength)
      throw new Error("the saved Python heap is damaged");
    out.set(packed.subarray(at, at + size), start);
    at += size;
    last = number;
  }
  if (at !== packed.byteLength) throw new Error("the saved Python heap is damaged");
  return out;
}
