// Reading an exercise file (site_src/pyodide/exercises/*.py) as the page gets it: text, not
// Python. One reader for the build page and microgpt's Level 2, written against what the file
// means rather than how it is laid out, so that the Python formatter may rewrite the file
// (r'''...''' or r"""...""", FUNCTIONS on one line or one tuple per line) without breaking a page.

// NAME = r'''...''' (or r"""..."""): the raw text between the quotes, or undefined.
export function rawText(text, name) {
  return text.match(new RegExp(`^${name} = r('''|""")([\\s\\S]*?)\\1`, "m"))?.[2];
}

// FUNCTIONS = (("name", "what it is compared with"), ...): [{name, compares}] in the file's order.
export function functionsOf(text) {
  const block = text.match(/^FUNCTIONS = \(([\s\S]*?)\n(?=\S)/m)?.[1] || "";
  return [...block.matchAll(/\(\s*"(\w+)",\s*"([^"]*)",?\s*\)/g)].map((m) => ({ name: m[1], compares: m[2] }));
}
