// Module Web Worker that runs ONE job (a Run or a Check) of the learner's Python with Pyodide.
// Its jobs, one module each: this file reads its settings and speaks the page's
// protocol; python_start.js starts Python (from a memory snapshot where it
// can); jobs.js runs the job and explains a Check; lock_down.js takes away
// what would outlive the job; downloads.js fetches (with progress and the
// service worker's handoff); heap_choice.js picks the heap Python starts from.
//
// The page (microgpt/runner.js) boots a worker ahead of time, hands it one job
// and then terminate()s it, so the next job starts in a worker whose
// JavaScript and Python the learner's earlier code never touched: whatever
// that code did (patched builtins, gc tricks, JavaScript reached through
// pyodide_js, files in /tmp), it went with the worker.
//
// Settings, in the worker's name (JSON, read as soon as this script runs):
//               {indexURL, modelURL, sandboxURL, diagnosisURL, floatsURL, sizesURL,
//                checkerURL?, exerciseURL?, count, handoff, prefetch, offer, module}   (count: no service worker serves this page yet;
//                offer: {key, digest, size, cache, url, failedKey, shipped}, the record ../snapshot.js
//                keeps and the heap the site ships ({url, digest, size}, or null), or null: then a
//                "snapshot" message brings it; module: whether the page has a compiled WebAssembly;
//                checkerURL, exerciseURL: an exercise of functions' Check, see jobs.js)
// Messages in:  {type: "init", interruptBuffer?, module?}   (at once: what a name cannot carry)
//               {type: "retry"}   (the learner's Retry of the downloads reported stalled)
//               {type: "snapshot", key, digest, size, cache, url, failedKey, shipped}   (when offer is null)
//               {type: "run", token, source} | {type: "check", token, source, inputs}
//               | {type: "call", token, source, inputs}   (a series: any number of calls, nothing else)
//               {type: "explain", token, expected?}   (after "collected": the page wants the explanation;
//                 expected: JSON of the graph's numbers, for an exercise of functions)
// Messages out: {type: "progress", text, loaded?, total?}
//               {type: "stalled", list: [{what, loaded, total}]}   (the downloads stalled now; [] when none)
//               {type: "snapshot-made", key, packed} | {type: "snapshot-missing", key, digest, reason}
//                 | {type: "snapshot-failed", key, reason} | {type: "heap-failed", digest, reason}
//                 (all before "ready")
//               {type: "ready", pyodide, python, ms, stages, start, module}  |  {type: "error", message}
//               {type: "output", token, stream, text}   (prints during a Run, already cut to the limit)
//               {type: "collected", token, result}       (Check: the numbers multi_head gave, and nothing else)
//               (a call: "done" with the numbers alone, as "collected" gives them)
//               {type: "done", token, result, health}   (health: "" or why Python misbehaved)

import { post } from "./downloads.js";
import { snapshotFrom } from "./heap_choice.js";
import { retryStalled } from "../../runtime/download_watch.js";
import { startPython } from "./python_start.js";
import { explain, takeJob } from "./jobs.js";

let offerSnapshot = null;
// What the page offers (in the settings, or its "snapshot" message): {key, digest, ..., shipped}.
const snapshotOffer = new Promise((resolve) => {
  offerSnapshot = resolve;
});
let handOver = null;
// The page's "init" message: {interruptBuffer, module}.
const handedOver = new Promise((resolve) => {
  handOver = resolve;
});

// The settings runner.js gives this worker in its name.
function settingsFromName() {
  let settings = null;
  try {
    settings = JSON.parse(self.name);
  } catch {
    // not JSON: said below
  }
  return settings && typeof settings === "object" && typeof settings.indexURL === "string" ? settings : null;
}

const settings = settingsFromName();
if (!settings) {
  post({
    type: "error",
    message: "the Python worker was started without its settings (runner.js gives them in its name)",
  });
} else {
  if (settings.offer && typeof settings.offer === "object") offerSnapshot(snapshotFrom(settings.offer));
  startPython(settings, snapshotOffer, handedOver);
}

self.onmessage = (event) => {
  const message = event.data || {};
  if (message.type === "init") {
    handOver({
      interruptBuffer: message.interruptBuffer || null,
      module: message.module instanceof WebAssembly.Module ? message.module : null,
    });
  } else if (message.type === "snapshot") {
    offerSnapshot(snapshotFrom(message));
  } else if (message.type === "run" || message.type === "check" || message.type === "call") {
    takeJob(message);
  } else if (message.type === "explain") {
    explain(message);
  } else if (message.type === "retry") {
    retryStalled();
  }
};
