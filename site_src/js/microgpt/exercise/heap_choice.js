// Which Python heap an exercise worker starts from, and how Pyodide's
// WebAssembly is instantiated for it (see python_start.js, on starting from a
// memory snapshot): a heap this browser saved, the one the site ships, or none,
// chosen from what the page offers (snapshotFrom).

import { unpackHeap } from "./heap_pages.js";
import { sha256Hex } from "./heap_recipe.js";
import { fetchOk, fileName, oneLine, post } from "./downloads.js";

// How long a worker waits for the shipped heap once everything else is ready
// to start Python: restoring saves ~3 s of a normal start on a slow laptop,
// and a line too slow to bring 15 MB in time starts Python the normal way.
export const WAIT_FOR_HEAP_MS = 2000;

// The heap this browser keeps (../snapshot.js), read and checked here, where
// no learner code has run yet: {bytes} when its digest matches the record,
// {missing} when it is absent or does not match.
export async function readSavedHeap(offer) {
  try {
    const response = await (await caches.open(offer.cache)).match(offer.url);
    if (!response) return { missing: "no saved copy" };
    const packed = new Uint8Array(await response.arrayBuffer());
    if (packed.byteLength !== offer.size || (await sha256Hex(packed)) !== offer.digest) {
      return { missing: "the saved copy does not match its digest" };
    }
    return { bytes: unpackHeap(packed) };
  } catch (err) {
    return { missing: oneLine(err) };
  }
}

// The heap the site ships ({url, digest, size}), downloaded now; chooseHeap()
// gives up on one that is slow to come (tracker: the progress line, on a first visit).
export function downloadHeap(shipped, tracker) {
  const controller = new AbortController();
  const bytes = (async () => {
    // Straight from Cache Storage when the service worker has stored it (a repeat
    // visit): 15 MB that need not stream through the service worker's thread.
    const stored = self.caches ? await caches.match(shipped.url).catch(() => null) : null;
    const response = stored || (await fetchOk(shipped.url, { priority: "low", signal: controller.signal }));
    const packed = new Uint8Array(await response.arrayBuffer());
    if (packed.byteLength !== shipped.size || (await sha256Hex(packed)) !== shipped.digest) {
      throw new Error("the downloaded heap does not match this build's digest");
    }
    return unpackHeap(packed);
  })();
  bytes.catch(() => {});
  return {
    bytes,
    abort() {
      controller.abort();
      if (tracker) tracker.skip(fileName(shipped.url));
    },
  };
}

// Which heap this worker starts from: {bytes, from: "saved"|"shipped"},
// {missing, from} when one was offered and is not usable, or {} for none
// (a normal start). A heap of this browser made for these files comes first;
// the shipped one if it comes within WAIT_FOR_HEAP_MS.
// startDownload(offer): the shipped heap's download (started at most once), or null.
export async function chooseHeap(offer, key, startDownload) {
  if (key && offer.key === key && offer.digest && offer.cache) {
    const saved = await readSavedHeap(offer);
    if (saved.bytes) return { ...saved, from: "saved" };
    post({ type: "snapshot-missing", key, digest: offer.digest, reason: saved.missing });
  }
  const download = startDownload(offer);
  if (!download) return {};
  let timer = null;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve(null), WAIT_FOR_HEAP_MS);
  });
  try {
    const bytes = await Promise.race([download.bytes, late]);
    if (bytes) return { bytes, from: "shipped" };
    download.abort();
    return {};
  } catch (err) {
    return { missing: oneLine(err), from: "shipped" };
  } finally {
    clearTimeout(timer);
  }
}

// The heap size a snapshot holds (Pyodide's header: word 1 is the header's length).
export function snapshotHeapBytes(bytes) {
  const header = new Uint32Array(bytes.buffer, bytes.byteOffset, 2);
  return bytes.byteLength - header[1];
}

// Pyodide instantiates its WebAssembly through WebAssembly.instantiate(Streaming);
// wrapped here, before any learner code runs (they only ever instantiate
// Pyodide's own module), to
// - use the module an earlier worker compiled (`compiled`, handed on by the
//   page): the browser shares its compiled code between workers, so this one
//   neither compiles it again nor compiles, function by function, the code
//   the earlier one already ran (Chrome compiles WebAssembly lazily); or the
//   one this worker began to compile when it started (a repeat visit);
// - grow the memory to a snapshot's heap first: Pyodide 314 restores into a
//   heap of the default size and fails ("offset is out of bounds") when the
//   snapshot's heap had grown past it;
// - note when it was done (stages);
// - compile each of the tiny modules Pyodide makes to put a JavaScript function
//   into its function table (~260 while it starts, of ~30 distinct signatures)
//   once per signature: a module's bytes depend only on the signature, and one
//   compiled module can be instantiated with any function.
export function watchInstantiate({ stages, t0, compiled = null, heapBytes = 0, keep }) {
  const done = (result) => {
    const memory = result && result.instance && result.instance.exports.memory;
    if (memory && memory.buffer.byteLength < heapBytes) {
      memory.grow(Math.ceil((heapBytes - memory.buffer.byteLength) / 65536));
    }
    if (result && result.module instanceof WebAssembly.Module) keep(result.module);
    stages.instantiated = performance.now() - t0;
    return result;
  };
  const streaming = WebAssembly.instantiateStreaming;
  const plain = WebAssembly.instantiate;
  const RealModule = WebAssembly.Module;
  const tiny = new Map(); // the bytes of a small module (as a string) -> its compiled module
  WebAssembly.Module = new Proxy(RealModule, {
    construct(target, args, newTarget) {
      const bytes = args[0];
      if (!(bytes instanceof Uint8Array) || bytes.byteLength > 128 || newTarget !== WebAssembly.Module) {
        return Reflect.construct(target, args, newTarget === WebAssembly.Module ? target : newTarget);
      }
      const key = String.fromCharCode(...bytes);
      let module = tiny.get(key);
      if (!module) tiny.set(key, (module = new RealModule(bytes)));
      return module;
    },
  });
  // The module compiled ahead (a promise of it, or of null): instantiated from
  // it when there is one, else (or if that fails) from Pyodide's own source.
  const ahead = async (imports) => {
    const module = await compiled;
    if (!(module instanceof WebAssembly.Module)) throw new Error("no module compiled ahead");
    return { module, instance: await plain.call(WebAssembly, module, imports) };
  };
  WebAssembly.instantiateStreaming = (source, imports) => {
    stages.instantiating = performance.now() - t0;
    return ahead(imports)
      .then(
        (result) => {
          Promise.resolve(source).then(
            (r) => r.body && r.body.cancel(),
            () => {},
          ); // Pyodide's own download, not needed
          return result;
        },
        () => streaming.call(WebAssembly, source, imports),
      )
      .then(done);
  };
  WebAssembly.instantiate = (source, imports) => {
    stages.instantiating = performance.now() - t0;
    return ahead(imports)
      .catch(() => plain.call(WebAssembly, source, imports))
      .then(done);
  };
  return () => {
    WebAssembly.instantiateStreaming = streaming;
    WebAssembly.instantiate = plain;
    WebAssembly.Module = RealModule;
  };
}

// The page's description of the shipped heap, or null.
function shippedHeap(value) {
  if (!value || typeof value.url !== "string" || typeof value.digest !== "string" || !Number.isInteger(value.size))
    return null;
  return { url: value.url, digest: value.digest, size: value.size };
}

// The page's offer, as the worker uses it.
export function snapshotFrom(value) {
  return {
    key: String(value.key || ""),
    digest: String(value.digest || ""),
    size: Number(value.size) || 0,
    cache: String(value.cache || ""),
    url: String(value.url || ""),
    failedKey: String(value.failedKey || ""),
    shipped: shippedHeap(value.shipped),
  };
}
