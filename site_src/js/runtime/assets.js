// Where the site lives, and cached JSON/binary downloads from it.
//
// This file is served as <site>/js/runtime/assets.js, so the site root is two
// folders up from import.meta.url. Every URL is built from that root, which
// keeps the pages working under a sub-path (http://host/some/lesson/) and after
// Material's instant navigation, whatever page is showing.

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

// fetch() that turns a network failure or an HTTP error into an AssetError.
async function fetchOk(path, url) {
  let response;
  try {
    response = await fetch(url);
  } catch (err) {
    throw new AssetError(`could not download ${path} (${err.message})`, { kind: "network", url });
  }
  if (!response.ok) {
    throw new AssetError(`${path} is missing on this site (HTTP ${response.status})`, { kind: "missing", url });
  }
  return response;
}

const jsonCache = new Map();

export function loadJSON(path) {
  const url = siteUrl(path);
  if (!jsonCache.has(url)) {
    const promise = (async () => {
      const response = await fetchOk(path, url);
      try {
        return await response.json();
      } catch (err) {
        throw new AssetError(`${path} is not valid JSON`, { kind: "corrupt", url });
      }
    })();
    promise.catch(() => jsonCache.delete(url)); // a failed download may be retried
    jsonCache.set(url, promise);
  }
  return jsonCache.get(url);
}

async function sha256Hex(bytes) {
  if (!globalThis.crypto || !crypto.subtle) return null; // not a secure context: skip the check
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
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
      throw new AssetError(`${path} has ${data.byteLength} bytes, the manifest says ${expectedBytes}`, { kind: "corrupt", url });
    }
    if (sha256) {
      const actual = await sha256Hex(data);
      if (actual && actual !== sha256.toLowerCase()) {
        throw new AssetError(`${path} does not match its SHA-256 in the manifest`, { kind: "corrupt", url });
      }
    }
    return data;
  })();
  promise.catch(() => byteCache.delete(url));
  byteCache.set(url, promise);
  return promise;
}
