// The site's colours, in one place for every script: heads and models come from the palette's
// CSS variables (wasm_assets/palette.css, which export/palette.py writes), so they follow the
// light and dark schemes; the page's own colours come from Material's variables and the site's
// palette stylesheet (site_src/css/colours.css). No other module types a colour
// (tests/site_build/test_js_house_rules.py; for stylesheets, test_css_palette.py).

// For the style of an element: head h (from 0) and a model by its registry name.
export const headColourVar = (h) => `var(--mha-head-${h + 1})`;
export const modelColourVar = (name) => `var(--mha-model-${name})`;

// Resolved values for a canvas, which cannot read var(): what the page's CSS gives, or, where a
// stylesheet did not load, the light scheme's value.
const LIGHT = {
  "--mha-head": "#0072b2",
  "--mha-st-positive": "#0072b2",
  "--mha-st-negative": "#c24f00",
  "--mha-mask-open": "#0072b2",
  "--md-default-fg-color": "#000",
  "--md-default-bg-color": "#fff",
  "--md-default-fg-color--lightest": "#ddd",
};

// Text on a coloured cell: black or white, whichever contrasts more (runtime/colormap.js).
export const INK = { dark: "#000", light: "#fff" };

export function cssColour(node, name) {
  const v = getComputedStyle(node).getPropertyValue(name).trim();
  return v || LIGHT[name] || LIGHT[name.replace(/-\d+$/, "")];
}

export function headColour(node, h) {
  return cssColour(node, `--mha-head-${h + 1}`);
}
