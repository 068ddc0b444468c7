// Makes the exercise's Python heap at build time, in Node, with the recipe the
// browser uses (site_src/js/microgpt/exercise/heap_recipe.js), so a learner's
// first visit restores Python instead of starting it (~3 s of start-up saved).
//
//   node site_src/hooks/python_heap.mjs PYODIDE_DIR SANDBOX_PY DIAGNOSIS_PY OUT
//
// Called by python_heap.py. The heap is made reproducible: the clock reads a
// fixed instant and the entropy source is a fixed sequence while Python
// starts, so the same files always give the same bytes (and one build's heap
// does not change the service worker's runtime cache name on the next build),
// wherever the checkout lies.
// Nothing secret depends on them: the worker reseeds `random` and tempfile's
// names from the browser's entropy after every restore (python_start.js SETUP), and
// the hash seed is as public as in any heap a browser made for itself.

import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const [pyodideDir, sandboxPath, diagnosisPath, out] = process.argv.slice(2);
if (!out) {
  console.error("usage: node python_heap.mjs PYODIDE_DIR SANDBOX_PY DIAGNOSIS_PY OUT");
  process.exit(2);
}

function fixedWorld() {
  const instant = Date.UTC(2026, 0, 1);
  Date.now = () => instant;
  performance.now = () => 0;
  let state = 0x6d686131;
  const fill = (array) => {
    const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
    for (let i = 0; i < bytes.length; i++) {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      bytes[i] = state >>> 24;
    }
    return array;
  };
  crypto.getRandomValues = fill;
  createRequire(import.meta.url)("crypto").randomFillSync = fill; // what Emscripten uses in Node
  // Emscripten makes this script's path Python's argv[0] (sys.executable and
  // friends): a checkout elsewhere would then give other bytes. With no
  // script in argv it uses "./this.program", as in a browser.
  process.argv.length = 1;
}

const clock = Date.now;
const started = clock();
const here = (path) => pathToFileURL(path).href;
const recipe = await import(new URL("../js/microgpt/exercise/heap_recipe.js", import.meta.url).href);
const { loadPyodide } = await import(here(`${pyodideDir.replace(/\/$/, "")}/pyodide.mjs`));
const sources = {
  sandboxSource: readFileSync(sandboxPath, "utf8"),
  diagnosisSource: readFileSync(diagnosisPath, "utf8"),
};
fixedWorld();
const py = await loadPyodide({ ...recipe.pyodideOptions(`${pyodideDir.replace(/\/$/, "")}/`), _makeSnapshot: true });
const packed = recipe.takeHeap(py, sources);
const partial = `${out}.partial`;
writeFileSync(partial, packed);
renameSync(partial, out);
console.log(JSON.stringify({ bytes: packed.byteLength, pyodide: py.version, ms: clock() - started }));
