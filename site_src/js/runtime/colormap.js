// Colour-blind-safe sequential colour map (viridis, sampled at 9 stops and
// interpolated) plus a text colour with enough contrast on top of it.

const VIRIDIS = [
  [68, 1, 84], [71, 44, 122], [59, 81, 139], [44, 113, 142], [33, 144, 141],
  [39, 173, 129], [92, 200, 99], [170, 220, 50], [253, 231, 37],
];

export function viridis(x) {
  const v = Math.min(1, Math.max(0, Number.isFinite(x) ? x : 0)) * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(v));
  const f = v - i;
  const [a, b] = [VIRIDIS[i], VIRIDIS[i + 1]];
  return a.map((c, k) => Math.round(c + (b[k] - c) * f));
}

export function cellColours(x) {
  const [r, g, b] = viridis(x);
  const luminance = (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
  return { background: `rgb(${r}, ${g}, ${b})`, color: luminance > 0.45 ? "#111" : "#fff" };
}
