// Where the site lives, and cached JSON/binary downloads from it.
//
// This file is served as <site>/js/runtime/assets.js, so the site root is two
// folders up from import.meta.url. Every URL is built from that root, which
// keeps the pages working under a sub-path (http://host/some/lesson/) and after
// Material's instant navigation, whatever page is showing.

import { sha256HexJS } from "./sha256.js";

export const SITE_ROOT = new URL("../../", import.meta.url);

export function siteUrl(path) {
  return new URL(path, SITE_ROOT).href;
}

export class AssetError extends Error {
  constructor(message, { kind = "missing", url = "" } = {}) {
    super(message);
    this.name = "AssetError";
    this.kind = kind; // "missing" | "corrupt" | "network"
    this.url = url;
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

// fetch() that turns a network failure or an HTTP error into an AssetError.
async function fetchOk(path, url) {
  let response;
  try {
    response = await fetch(url);
  } catch (err) {
    throw new AssetError(`${describeFile(path)} could not be downloaded (the connection failed: ${err.message})`, { kind: "network", url });
  }
  if (!response.ok) {
    throw new AssetError(`${describeFile(path)} is missing on this site (HTTP ${response.status})`, { kind: "missing", url });
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
  if (C !== undefined && (!isInt(C) || C !== itos.length)) return `it lists ${itos.length} tokens but says the models have ${C}`;
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
    if (m.bytes !== undefined && (!isInt(m.bytes) || m.bytes === 0)) return `${m.name}'s size is not a positive integer`;
    if (m.sha256 !== undefined && !/^[0-9a-f]{64}$/i.test(String(m.sha256))) return `${m.name}'s SHA-256 is not 64 hex digits`;
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
      let json;
      try {
        json = await response.json();
      } catch (err) {
        throw new AssetError(`${describeFile(path)} is damaged: it is not valid JSON`, { kind: "corrupt", url });
      }
      const problem = SHAPE_CHECKS[path] ? SHAPE_CHECKS[path](json) : null;
      if (problem) throw new AssetError(`${describeFile(path)} has the wrong shape: ${problem}`, { kind: "corrupt", url });
      return json;
    })();
    promise.catch(() => jsonCache.delete(url)); // a failed download may be retried
    jsonCache.set(url, promise);
  }
  return jsonCache.get(url);
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
    const response = await fetchOk(path, url);
    const header = Number(response.headers.get("Content-Length"));
    const total = expectedBytes || (Number.isFinite(header) && header > 0 ? header : 0);
    let data;
    if (response.body && response.body.getReader) {
      const reader = response.body.getReader();
      const chunks = [];
      let loaded = 0;
      report(0, total);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        loaded += value.byteLength;
        report(loaded, Math.max(total, loaded));
      }
      data = new Uint8Array(loaded);
      let offset = 0;
      for (const chunk of chunks) {
        data.set(chunk, offset);
        offset += chunk.byteLength;
      }
    } else {
      data = new Uint8Array(await response.arrayBuffer());
    }
    report(data.byteLength, data.byteLength);
    if (expectedBytes && data.byteLength !== expectedBytes) {
      throw new AssetError(`${describeFile(path)} is damaged: it has ${data.byteLength} bytes, the site's manifest says ${expectedBytes}`, { kind: "corrupt", url });
    }
    if (sha256) {
      const actual = await sha256Hex(data);
      if (actual !== sha256.toLowerCase()) {
        throw new AssetError(`${describeFile(path)} is damaged: its SHA-256 does not match the site's manifest`, { kind: "corrupt", url });
      }
    }
    return data;
  })();
  promise.catch(() => byteCache.delete(url));
  byteCache.set(url, promise);
  return promise;
}
