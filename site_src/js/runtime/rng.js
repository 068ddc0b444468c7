// Mulberry32: the seeded generator of export/generate.py, bit for bit.
// The state is an unsigned 32-bit integer; random() returns a float in [0, 1).

export class Mulberry32 {
  constructor(seed) {
    if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be an integer, got ${seed}`);
    this.state = seed >>> 0; // same as Python's seed & 0xFFFFFFFF, negatives included
  }

  random() {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1) >>> 0;
    t = (t ^ ((t + (Math.imul(t ^ (t >>> 7), t | 61) >>> 0)) >>> 0)) >>> 0;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
}
