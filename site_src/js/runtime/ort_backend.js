// What this browser can run the models on, known before anything is
// downloaded: whether it runs WebAssembly at all, whether WebGPU has a real
// adapter, and how many WebAssembly threads are worth asking for.

export function supportProblem() {
  if (typeof WebAssembly !== "object") return "this browser cannot run WebAssembly";
  if (typeof BigInt64Array !== "function") return "this browser lacks 64-bit integer arrays (BigInt64Array)";
  if (typeof fetch !== "function" || typeof Promise !== "function") return "this browser is too old for this page";
  return null;
}

let probe = null;

// What WebGPU offers here: {available, fallback, description, reason}.
export function probeWebGPU() {
  if (!probe) {
    probe = (async () => {
      if (!("gpu" in navigator) || !navigator.gpu) {
        return { available: false, fallback: false, reason: "this browser does not offer WebGPU" };
      }
      try {
        const adapter = await navigator.gpu.requestAdapter();
        if (!adapter) return { available: false, fallback: false, reason: "WebGPU found no graphics adapter" };
        const info = adapter.info || {};
        const fallback = Boolean(info.isFallbackAdapter ?? adapter.isFallbackAdapter);
        const description = [info.vendor, info.architecture, info.description].filter(Boolean).join(" ");
        return {
          available: true,
          fallback,
          description,
          reason: fallback ? "only a software (fallback) WebGPU adapter" : "",
        };
      } catch (err) {
        return { available: false, fallback: false, reason: `WebGPU adapter request failed (${err.message})` };
      }
    })();
  }
  return probe;
}

// The backend a preference ("auto" | "wasm" | "webgpu") resolves to, and why.
export async function resolveBackend(preference) {
  const gpu = await probeWebGPU();
  if (preference === "wasm") return { backend: "wasm", note: "" };
  if (preference === "webgpu") {
    if (gpu.available)
      return { backend: "webgpu", note: gpu.fallback ? "WebGPU runs on a software adapter here, which is slow." : "" };
    return { backend: "wasm", note: `WebGPU is not available (${gpu.reason}); using WebAssembly.` };
  }
  if (gpu.available && !gpu.fallback) return { backend: "webgpu", note: "" };
  return {
    backend: "wasm",
    note: gpu.available ? "Auto chose WebAssembly: WebGPU offers only a software adapter here." : "",
  };
}

// WebAssembly threads. Without cross-origin isolation there is no
// SharedArrayBuffer, so one thread. With it, two threads on machines with at
// least four cores: these models are so small (about a million multiply-adds a
// token) that more threads mostly add synchronisation; on a two-core machine one
// thread measured faster than two (bench/RESULTS.md). ?threads=N overrides.
export function threadCount() {
  // Some browsers say they are isolated but offer no SharedArrayBuffer (WebKitGTK).
  if (!globalThis.crossOriginIsolated || typeof SharedArrayBuffer !== "function") return 1;
  const asked = Number(new URLSearchParams(globalThis.location ? location.search : "").get("threads"));
  const cores = navigator.hardwareConcurrency || 1;
  if (Number.isInteger(asked) && asked >= 1) return Math.min(asked, cores, 16);
  return cores >= 4 ? 2 : 1;
}
