// Loading onnxruntime-web, choosing a backend and running the lesson's models.
//
// Exactly one onnxruntime build is imported per page: ort.webgpu.min.mjs when
// WebGPU will be used (it runs the WebAssembly backend too), otherwise the
// smaller ort.wasm.min.mjs. Both come from <site>/vendor/ort/, and env.wasm.wasmPaths
// points there, so the site works from any static server and under a sub-path.
// Without cross-origin isolation WebAssembly runs on one thread.
//
// The parts: ort_backend.js (what this browser can run on), ort_engine.js
// (the WebAssembly engine's download and start), ort_session.js (running the
// models). Pages import what they use from here, so none needs to know the parts.

import { siteUrl } from "./assets.js";
import { probeWebGPU, threadCount } from "./ort_backend.js";
import { ORT_DIR, downloadEngine, importRuntimeFile, startEngine } from "./ort_engine.js";

export { probeWebGPU, resolveBackend, supportProblem } from "./ort_backend.js";
export { onEngineProgress } from "./ort_engine.js";
export { ModelRunner, serial } from "./ort_session.js";

const BUILD_FILES = { wasm: "ort.wasm.min.mjs", webgpu: "ort.webgpu.min.mjs" };

let loaded = null; // {build, promise}

export class BuildMismatchError extends Error {
  constructor() {
    super(
      "WebGPU needs the WebGPU build of onnxruntime, and this page already loaded the WebAssembly-only one; reload the page to switch.",
    );
    this.name = "BuildMismatchError";
  }
}

export function loadedBuild() {
  return loaded ? loaded.build : null;
}

// Import onnxruntime once. The WebGPU build is only loaded when an adapter exists.
export async function loadOrt(backend) {
  const wanted = backend === "webgpu" ? "webgpu" : "wasm";
  if (loaded) {
    if (wanted === "webgpu" && loaded.build !== "webgpu") throw new BuildMismatchError();
    return loaded.promise;
  }
  if (wanted === "webgpu" && !(await probeWebGPU()).available) throw new Error("no WebGPU adapter");
  const downloaded = downloadEngine(wanted); // alongside the import of onnxruntime itself
  downloaded.catch(() => {});
  const promise = importRuntimeFile(BUILD_FILES[wanted]).then(async (ort) => {
    ort.env.wasm.wasmPaths = siteUrl(ORT_DIR);
    ort.env.wasm.proxy = false;
    ort.env.wasm.numThreads = threadCount();
    ort.env.logLevel = "error";
    await startEngine(ort, wanted, downloaded);
    // onnxruntime falls back to one thread where it cannot start more (it
    // writes that back into env), so the label says what runs, not what was asked.
    const running = Number(ort.env.wasm.numThreads);
    threadsRunning = Number.isInteger(running) && running >= 1 ? running : 1;
    return ort;
  });
  loaded = { build: wanted, promise };
  promise.catch(() => {
    if (loaded && loaded.promise === promise) loaded = null;
  });
  return promise;
}

let threadsRunning = null; // read back from onnxruntime once its engine started

// The WebAssembly threads onnxruntime runs on: what it reported after
// starting, or, before it started, what it will be asked for.
export function runningThreads() {
  return threadsRunning ?? threadCount();
}
