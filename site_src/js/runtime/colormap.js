// Colour-blind-safe sequential colour map (viridis, sampled at 9 stops and
// interpolated) plus a text colour with enough contrast on top of it.

import { INK } from "./palette.js";

const VIRIDIS = [
  [68, 1, 84],
  [71, 44, 122],
  [59, 81, 139],
  [44, 113, 142],
  [33, 144, 141],
  [39, 173, 129],
  [92, 200, 99],
  [170, 220, 50],
  [253, 231, 37],
];

export function viridis(x) {
  const v = Math.min(1, Math.max(0, Number.isFinite(x) ? x : 0)) * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(v));
  const f = v - i;
  const [a, b] = [VIRIDIS[i], VIRIDIS[i + 1]];
  return a.map((c, k) => Math.round(c + (b[k] - c) * f));
}

// WCAG relative luminance. Black or white text, whichever contrasts more: on
// every colour one of them reaches at least 4.58:1 (the two tie at L = 0.179),
// while near-black #111 misses 4.5:1 in viridis' middle teal.
function relativeLuminance(rgb) {
  const [r, g, b] = rgb.map((c) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function cellColours(x) {
  const [r, g, b] = viridis(x);
  const L = relativeLuminance([r, g, b]);
  const onBlack = (L + 0.05) / 0.05;
  const onWhite = 1.05 / (L + 0.05);
  return { background: `rgb(${r}, ${g}, ${b})`, color: onBlack >= onWhite ? INK.dark : INK.light };
}
