// Where the site lives, and cached JSON/binary downloads from it.
//
// This file is served as <site>/js/runtime/assets.js, so the site root is two
// folders up from import.meta.url. Every URL is built from that root, which
// keeps the pages working under a sub-path (http://host/some/lesson/) and after
// Material's instant navigation, whatever page is showing.
//
// siteUrl() is the one place a runtime file's URL is made. It addresses the
// file by this build's content version (asset_map.js, written by
// site_src/hooks/asset_versions.py): wasm_assets/... gets ?v=<digest>, and
// vendor/<package>/... lies in vendor/<package>/<digest>/, because onnxruntime
// and Pyodide load their own files by fixed names from one folder. So a page
// only ever asks for the files of the build it came from.

import { BUILD_ID, FILE_DIGESTS, FILE_SIZES, FILE_VERSIONS, FOLDER_VERSIONS } from "./asset_map.js";
import { watchedFetch } from "./download_watch.js";
import { sha256HexJS } from "./sha256.js";

export const SITE_ROOT = new URL("../../", import.meta.url);
const FILES = new Map(Object.entries(FILE_VERSIONS));
const FOLDERS = Object.entries(FOLDER_VERSIONS);

export function versionedPath(path) {
  const version = FILES.get(path);
  if (version) return `${path}?v=${version}`;
  for (const [prefix, target] of FOLDERS) {
    if (path.startsWith(prefix)) return target + path.slice(prefix.length);
  }
  return path;
}

export function siteUrl(path) {
  return new URL(versionedPath(path), SITE_ROOT).href;
}

export const buildId = BUILD_ID;

// The decoded size of a runtime file of this build (0 when the build does not say).
export function fileSize(path) {
  return Number.isInteger(FILE_SIZES[path]) ? FILE_SIZES[path] : 0;
}

// The SHA-256 (hex) of a package file of this build ("" when the build does not say).
export function fileDigest(path) {
  return typeof FILE_DIGESTS[path] === "string" ? FILE_DIGESTS[path] : "";
}

export class AssetError extends Error {
  constructor(message, { kind = "missing", url = "", advice = "" } = {}) {
    super(message);
    this.name = "AssetError";
    this.kind = kind; // "missing" | "corrupt" | "network" | "offline" | "stale"
    this.url = url;
    if (advice) this.advice = advice;
  }
}

// Words for the files a learner may hear about; a message names the file too,
// so whoever maintains the site knows what to restore.
const FILE_WORDS = [
  [/^wasm_assets\/vocab\.json$/, "the models' vocabulary"],
  [/^wasm_assets\/models\/manifest\.json$/, "the list of models"],
  [/^wasm_assets\/models\/.+\.onnx$/, "a model file"],
  [/^wasm_assets\/evidence\.json$/, "the lesson's measured figures"],
  [/^wasm_assets\/worksheet\.json$/, "the worksheet's numbers"],
  [/^vendor\/ort\//, "part of onnxruntime, which runs the models"],
  [/^vendor\/pyodide\//, "part of Pyodide, which runs Python"],
];

export function describeFile(path) {
  const found = FILE_WORDS.find(([pattern]) => pattern.test(path));
  return found ? `${path} (${found[1]})` : path;
}

// ------------------------------------------------------------ why a file failed
//
// A file that does not come, or does not match, has three causes besides a
// broken site: the learner is offline, or a new build has replaced this page's
// files (a static host swaps the whole site on deploy). build.json, never
// cached, tells them apart.

export const OFFLINE_ADVICE = "You are offline (or the site is unreachable); reconnect and reload the page.";
export const STALE_MESSAGE = "A new version of this lesson is live — reload the page to use it";

let buildCheck = null;

// "new" (another build is live), "same", or "offline". Offline only when the
// browser says so: a site that does not answer while the browser is online is
// "same", and the file's own failure is what the learner reads.
export function liveBuild() {
  if (!buildCheck) {
    buildCheck = (async () => {
      try {
        const response = await fetch(new URL("build.json", SITE_ROOT).href, { cache: "no-store" });
        if (!response.ok) return "same"; // no build.json: nothing to compare with
        const live = await response.json();
        return live && live.build && BUILD_ID && live.build !== BUILD_ID ? "new" : "same";
      } catch {
        return globalThis.navigator && navigator.onLine === false ? "offline" : "same";
      }
    })();
    // Asked again after a few seconds: the connection or the site may have changed.
    buildCheck.then(() =>
      setTimeout(() => {
        buildCheck = null;
      }, 3000),
    );
  }
  return buildCheck;
}

function staleError(path, url) {
  if (globalThis.dispatchEvent && typeof CustomEvent === "function") {
    dispatchEvent(new CustomEvent("mha:new-build", { detail: { path } })); // runtime/offline.js shows the update notice
  }
  return new AssetError(STALE_MESSAGE, {
    kind: "stale",
    url,
    advice: `This page belongs to the earlier version; its files (${path} among them) have been replaced.`,
  });
}

// The error to show for `fallback` (a failure of `path`): the same, unless the
// learner is offline or a new build is live.
export async function explainFailure(path, url, fallback) {
  const live = await liveBuild();
  if (live === "new") return staleError(path, url);
  if (live === "offline") {
    return new AssetError(`${describeFile(path)} could not be downloaded`, {
      kind: "offline",
      url,
      advice: OFFLINE_ADVICE,
    });
  }
  return fallback;
}

// ------------------------------------------------------------ handing a copy to the service worker
//
// A runtime file the page downloads before the service worker serves it (a
// first visit) is invisible to that worker, and the browser's HTTP cache may
// not keep a large one: a copy is left in PAGE_HANDOFF, which the worker checks
// against this build's digest and stores (site_src/hooks/service_worker.js),
// so the file is never downloaded a second time to work offline.
const PAGE_HANDOFF = "page-handoff";
// What the service worker keeps in its runtime cache (RUNTIME_PATTERN in site_src/hooks/service_worker.py).
const RUNTIME_PATH = /^(?:vendor\/ort\/|vendor\/pyodide\/|vendor\/pyodide-heap\/|wasm_assets\/models\/[^/]+\.onnx$)/;

// Whether a service worker answers this page's requests now.
export function servedByWorker() {
  return Boolean(globalThis.navigator && navigator.serviceWorker && navigator.serviceWorker.controller);
}

// Leaves `body` (bytes, a Blob or a stream) as the copy of `url`; never throws.
export async function handOff(url, body, type = "application/octet-stream") {
  if (!globalThis.caches || !globalThis.isSecureContext || !(globalThis.navigator && navigator.serviceWorker)) return;
  try {
    const cache = await caches.open(PAGE_HANDOFF);
    await cache.put(url, new Response(body, { status: 200, headers: { "Content-Type": type } }));
    const controller = navigator.serviceWorker.controller;
    if (controller) controller.postMessage({ type: "CACHE_FROM_HTTP_CACHE" }); // adopt it now
  } catch {
    // storage full or refused: the file is stored the next time a page uses it
  }
}

// The service worker's answer for a file that came damaged twice (see DAMAGED_HEADER there).
export function damagedTwice(response) {
  return Boolean(response && response.headers && response.headers.get("X-Mha-Damaged"));
}

export const DAMAGED_ADVICE =
  "Something between you and the site changed the file on its way (a Wi-Fi sign-in page, a proxy, a broken connection): " +
  "sign in to the network if it asks, then reload the page; if it keeps failing, tell the site's maintainer.";

export function damagedError(path, url) {
  return new AssetError(`${describeFile(path)} arrived damaged twice: it does not match this build's digest`, {
    kind: "corrupt",
    url,
    advice: DAMAGED_ADVICE,
  });
}

// fetch() that turns a network failure or an HTTP error into an AssetError.
// fetcher: how to ask (loadBytes watches its downloads for a stall).
async function fetchOk(path, url, fetcher = fetch) {
  let response;
  try {
    response = await fetcher(url);
  } catch (err) {
    throw await explainFailure(
      path,
      url,
      new AssetError(`${describeFile(path)} could not be downloaded (the connection failed: ${err.message})`, {
        kind: "network",
        url,
      }),
    );
  }
  // Damaged, or another build's file: a deploy replaced this page's build.
  if (damagedTwice(response)) throw await explainFailure(path, url, damagedError(path, url));
  if (!response.ok) {
    throw await explainFailure(
      path,
      url,
      new AssetError(`${describeFile(path)} is missing on this site (HTTP ${response.status})`, {
        kind: "missing",
        url,
      }),
    );
  }
  return response;
}

// Shape checks for the JSON files whose content decides what the pages show.
// Each returns null, or what is wrong in a few words; a file of the wrong shape
// is refused as clearly as a missing one.
const isInt = (x) => Number.isInteger(x) && x >= 0;

export function vocabProblem(json) {
  if (!json || typeof json !== "object" || Array.isArray(json)) return "it is not an object";
  const { itos, C, T, special } = json;
  if (!Array.isArray(itos) || itos.length === 0) return "it has no token list (itos)";
  const bad = itos.findIndex((t) => typeof t !== "string" || t.length === 0);
  if (bad >= 0) return `token ${bad} is not a non-empty string`;
  if (new Set(itos).size !== itos.length) return "its token list repeats tokens";
  if (C !== undefined && (!isInt(C) || C !== itos.length))
    return `it lists ${itos.length} tokens but says the models have ${C}`;
  // T and the special ids are the pipeline's (export/defaults.py, export/wordlm.py): the page types neither.
  if (!isInt(T) || T < 1) return "its context length T is missing or not a positive integer";
  if (!special || typeof special !== "object") return "its special token ids (special) are missing";
  for (const name of ["PAD", "BOS", "EOS", "UNK"]) {
    if (!(name in special)) return `its special token ids lack ${name}`;
  }
  for (const [name, id] of Object.entries(special)) {
    if (!isInt(id) || id >= itos.length) return `its special token ${name} has an id outside the token list`;
  }
  return null;
}

export function manifestProblem(json) {
  if (!json || !Array.isArray(json.models) || json.models.length === 0) return "it lists no models";
  for (const m of json.models) {
    if (!m || typeof m.name !== "string" || typeof m.file !== "string") return "a model has no name or file";
    if (m.bytes !== undefined && (!isInt(m.bytes) || m.bytes === 0))
      return `${m.name}'s size is not a positive integer`;
    if (m.sha256 !== undefined && !/^[0-9a-f]{64}$/i.test(String(m.sha256)))
      return `${m.name}'s SHA-256 is not 64 hex digits`;
  }
  if (json.T !== undefined && (!isInt(json.T) || json.T < 1)) return "its context length T is not a positive integer";
  return null;
}

const SHAPE_CHECKS = {
  "wasm_assets/vocab.json": vocabProblem,
  "wasm_assets/models/manifest.json": manifestProblem,
};

const jsonCache = new Map();

export function loadJSON(path) {
  const url = siteUrl(path);
  if (!jsonCache.has(url)) {
    const promise = (async () => {
      const response = await fetchOk(path, url);
      let bytes;
      try {
        bytes = new Uint8Array(await response.arrayBuffer());
      } catch (err) {
        throw await explainFailure(
          path,
          url,
          new AssetError(`${describeFile(path)} could not be downloaded (the connection failed: ${err.message})`, {
            kind: "network",
            url,
          }),
        );
      }
      // Another build's file under this build's address: the site was redeployed.
      if (!(await isThisBuilds(path, bytes)) && (await liveBuild()) === "new") throw staleError(path, url);
      let json;
      try {
        json = JSON.parse(new TextDecoder().decode(bytes));
      } catch (err) {
        throw new AssetError(`${describeFile(path)} is damaged: it is not valid JSON`, { kind: "corrupt", url });
      }
      const problem = SHAPE_CHECKS[path] ? SHAPE_CHECKS[path](json) : null;
      if (problem)
        throw new AssetError(`${describeFile(path)} has the wrong shape: ${problem}`, { kind: "corrupt", url });
      return json;
    })();
    promise.catch(() => jsonCache.delete(url)); // a failed download may be retried
    jsonCache.set(url, promise);
  }
  return jsonCache.get(url);
}

// Whether `bytes` are the content this build addresses `path` by (true when
// the build gives the file no version).
async function isThisBuilds(path, bytes) {
  const version = FILES.get(path);
  return !version || (await sha256Hex(bytes)).startsWith(version);
}

// crypto.subtle exists only in secure contexts (HTTPS, this machine); elsewhere
// the same digest comes from plain JavaScript, so the check always runs.
export async function sha256Hex(bytes) {
  if (globalThis.crypto && crypto.subtle) {
    try {
      const digest = await crypto.subtle.digest("SHA-256", bytes);
      return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
    } catch (err) {
      console.warn(`crypto.subtle failed (${err.message}); checking in JavaScript`);
    }
  }
  return sha256HexJS(bytes);
}

// The body of `response` (its progress is reported by the watch that fetched it).
async function readBody(response) {
  if (response.body && response.body.getReader) {
    const reader = response.body.getReader();
    const chunks = [];
    let loaded = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      loaded += value.byteLength;
    }
    const data = new Uint8Array(loaded);
    let offset = 0;
    for (const chunk of chunks) {
      data.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return data;
  }
  return new Uint8Array(await response.arrayBuffer());
}

const byteCache = new Map();

// Download a binary file with progress reports ({loaded, total}); checks the
// size and SHA-256 when they are given. Cached per URL for the page's life.
export function loadBytes(path, { bytes: expectedBytes, sha256, onProgress } = {}) {
  const url = siteUrl(path);
  const report = (loaded, total) => {
    if (onProgress) {
      try {
        onProgress({ loaded, total });
      } catch (err) {
        console.warn(err);
      }
    }
  };
  if (byteCache.has(url)) {
    return byteCache.get(url).then((data) => {
      report(data.byteLength, data.byteLength);
      return data;
    });
  }
  const promise = (async () => {
    const controlled = servedByWorker();
    const total = expectedBytes || fileSize(path);
    report(0, total);
    // Watched: a download that stops says so within seconds and can be asked for again;
    // the progress counts the bytes as they come, also while the service worker checks them.
    const watched = (href) =>
      watchedFetch(href, {
        what: describeFile(path),
        total,
        onProgress: ({ loaded }) => report(loaded, Math.max(total, loaded)),
      });
    const response = await fetchOk(path, url, watched);
    let data;
    try {
      data = await readBody(response);
    } catch (err) {
      throw await explainFailure(
        path,
        url,
        new AssetError(`${describeFile(path)} could not be downloaded (the connection failed: ${err.message})`, {
          kind: "network",
          url,
        }),
      );
    }
    report(data.byteLength, data.byteLength);
    if (expectedBytes && data.byteLength !== expectedBytes) {
      throw await explainFailure(
        path,
        url,
        new AssetError(
          `${describeFile(path)} is damaged: it has ${data.byteLength} bytes, the site's manifest says ${expectedBytes}`,
          { kind: "corrupt", url },
        ),
      );
    }
    const actual = sha256 || FILES.has(path) ? await sha256Hex(data) : "";
    if ((sha256 && actual !== sha256.toLowerCase()) || !actual.startsWith(FILES.get(path) || "")) {
      throw await explainFailure(
        path,
        url,
        new AssetError(`${describeFile(path)} is damaged: its SHA-256 does not match the site's manifest`, {
          kind: "corrupt",
          url,
        }),
      );
    }
    if (!controlled && RUNTIME_PATH.test(path)) handOff(url, data);
    return data;
  })();
  promise.catch(() => byteCache.delete(url));
  byteCache.set(url, promise);
  return promise;
}
