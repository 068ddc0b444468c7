// How page 4's stepper writes its numbers and names its heads, in every step alike, so a
// number in a sentence is the one in the step's list and in its picture's text alternative.

export const f3 = (x) => (Math.abs(x) < 0.0005 ? 0 : x).toFixed(3).replace("-", "−"); // three places, so printed sums add up
export const f2 = (x) =>
  Number.isFinite(x) ? (Math.abs(x) < 0.005 ? 0 : x).toFixed(2).replace("-", "−") : x > 0 ? "∞" : "−∞";
export const pct = (p) => `${(100 * p).toFixed(1)} %`;
export const q = (s) => `“${s}”`;

export function headName(run, h) {
  return run.H === 1 ? "the head" : `head ${h + 1}`;
}
