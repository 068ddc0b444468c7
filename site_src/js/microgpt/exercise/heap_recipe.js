// How the exercise's Python heap is made: one recipe for the heap the site
// ships (made at build time in Node, site_src/hooks/python_heap.mjs) and the
// one a browser makes itself when it has to start Python the normal way
// (worker.js). Both must be the same heap, or a restored worker would differ
// from a freshly started one.
//
// The heap is taken right after sandbox and diagnosis are imported, before
// any learner code exists. It holds no files (the file system lives outside
// the heap), so whoever restores it writes the files again (writeExerciseFiles).

import { packHeap } from "./heap_pages.js";

// Bump when what runs before the heap is taken changes (PRE_SNAPSHOT, pyodideOptions).
export const SNAPSHOT_FORMAT = "mha-snapshot-3";
export const HOME = "/home/pyodide";
export const MODEL_FILE = "microgpt-trained.json";
const MHA = "/opt/mha";
// Runs once per heap, before it is taken: what every job's interpreter starts from.
// sandbox.prepare() makes the guard's walk over every module and class here,
// once, so that sandbox.start() after a restore only takes what changed since.
export const PRE_SNAPSHOT = `import sys\nif "${MHA}" not in sys.path:\n    sys.path.append("${MHA}")\nimport sandbox, diagnosis\nsandbox.prepare()\n`;

// loadPyodide's options, the same wherever a heap is made or restored.
// Python's `js` module is an empty object: code that reaches JavaScript
// anyway (pyodide_js) can only spoil its own job.
export function pyodideOptions(indexURL) {
  return { indexURL, env: { HOME }, jsglobals: Object.create(null) };
}

// The exercise's files, as sandbox.py and diagnosis.py expect them.
export function writeExerciseFiles(FS, { sandboxSource, diagnosisSource, modelBytes = null }) {
  FS.mkdirTree(MHA);
  FS.writeFile(`${MHA}/sandbox.py`, sandboxSource);
  FS.writeFile(`${MHA}/diagnosis.py`, diagnosisSource);
  if (modelBytes) {
    FS.mkdirTree(HOME);
    FS.writeFile(`${HOME}/${MODEL_FILE}`, modelBytes);
  }
}

// The heap of a Python started with {_makeSnapshot: true}, without its zero pages (heap_pages.js).
export function takeHeap(py, sources) {
  writeExerciseFiles(py.FS, sources);
  py.runPython(PRE_SNAPSHOT);
  return packHeap(py.makeMemorySnapshot());
}

// Which browser-made heap a worker may restore: one made from the same
// Pyodide files (their folder, vendor/pyodide/<digest>/, is named by their
// content), the same exercise modules and this recipe.
export async function snapshotKey(indexURL, sandboxSource, diagnosisSource) {
  const folder = new URL(indexURL).pathname.split("/").filter(Boolean).pop() || "";
  const text = [SNAPSHOT_FORMAT, folder, sandboxSource, diagnosisSource].join("\0");
  return sha256Hex(new TextEncoder().encode(text));
}

export async function sha256Hex(bytes) {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}
