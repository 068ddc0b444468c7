// The settings form, checked: each field's text becomes a number or a
// message that says what is wrong and what to type instead. Pure functions
// (no DOM), so Node tests can run them.

export const MAX_TEMPERATURE = 5;
// Mulberry32 keeps 32 bits of the seed, so these are all the distinct draws.
export const MAX_SEED = 4294967295;
// A number as digits: sign, decimals and an exponent allowed; no comma, no 0x, no spaces inside.
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

// fields: {tokens, temperature, seed}, each {value: the field's text, badInput:
// the browser could not read what was typed}. limit: the most new tokens.
// minTemperature: the smallest temperature above 0, from the manifest
// (export/defaults.py MIN_TEMPERATURE; the Python CLI refuses the same ones).
// Returns {options: {maxNewTokens, temperature, seed}} or {problems: {field: message}}.
export function parseOptions(fields, limit, minTemperature = 0) {
  const problems = {};
  const text = (f) => String(fields[f]?.value ?? "").trim();
  // Plain decimal digits only: Number() reads "0x10" as 16, and a browser's
  // number field read "1,5" as 15 (a thousands comma), neither what was meant.
  const unreadable = (f) => Boolean(fields[f]?.badInput) || (text(f) !== "" && !DECIMAL.test(text(f)));

  const tokens = Number(text("tokens"));
  if (unreadable("tokens") || text("tokens") === "" || !Number.isInteger(tokens) || tokens < 1 || tokens > limit) {
    problems.tokens = `New tokens must be a whole number from 1 to ${limit}.`;
  }

  const temperature = Number(text("temperature"));
  if (text("temperature").includes(",")) {
    problems.temperature = `Temperature takes a point, not a comma: type 1.5 for one and a half (from 0 to ${MAX_TEMPERATURE}).`;
  } else if (unreadable("temperature") || text("temperature") === "" || !Number.isFinite(temperature)) {
    problems.temperature = `Temperature must be a number from 0 to ${MAX_TEMPERATURE} (0 means greedy).`;
  } else if (temperature < 0 || temperature > MAX_TEMPERATURE) {
    problems.temperature = `Temperature ${temperature} is out of range: use a number from 0 to ${MAX_TEMPERATURE} (0 means greedy).`;
  } else if (temperature > 0 && temperature < minTemperature) {
    problems.temperature = `Temperature ${temperature} is below the smallest one, ${minTemperature}: use 0 for greedy, or ${minTemperature} to ${MAX_TEMPERATURE}.`;
  }

  const seedText = text("seed");
  const seed = Number(seedText);
  if (unreadable("seed") || seedText === "" || !Number.isFinite(seed)) {
    problems.seed = `Seed must be a whole number from 0 to ${MAX_SEED}.`;
  } else if (/^\+?\d+$/.test(seedText) && BigInt(seedText.replace("+", "")) > BigInt(MAX_SEED)) {
    problems.seed = `This seed is too large: use a whole number from 0 to ${MAX_SEED}.`;
  } else if (!Number.isInteger(seed)) {
    problems.seed = `Seed must be a whole number (no decimals) from 0 to ${MAX_SEED}.`;
  } else if (seed < 0 || seed > MAX_SEED) {
    problems.seed = `Seed ${seedText} is out of range: use a whole number from 0 to ${MAX_SEED}.`;
  }

  if (Object.keys(problems).length) return { problems };
  return { options: { maxNewTokens: tokens, temperature, seed } };
}
