// The exercise's Python memory snapshot, kept in this browser (issue 21).
//
// A Pyodide worker that started Python the normal way hands the page a copy
// of its WebAssembly heap, taken before any learner code existed
// (exercise/worker.js, "snapshot-made"), without its zero pages
// (exercise/heap_pages.js: ~15 MB). The page keeps it in Cache Storage
// (CACHE) and its SHA-256 in localStorage (RECORD), and offers that record
// to every worker it starts; the worker reads the entry, checks the digest
// and restores the heap instead of starting Python (a fraction of the time).
//
// Why the digest lives in localStorage: the learner's code runs in a worker,
// and code that reaches JavaScript there (pyodide_js) can write to this
// origin's Cache Storage, but a worker has no localStorage and cannot change
// what the page offers. A snapshot replaced by such code would start every
// later worker from a heap of its choosing; its digest no longer matches the
// record, so it is never restored: the next worker starts normally (and
// makes a new one). The record only ever comes from a worker that had not
// said "ready" yet, i.e. had no job (runner.js).
//
// Nothing here is needed: whatever fails (no Cache Storage, no localStorage,
// a quota, a missing or damaged entry), the worker starts Python the normal
// way, and the learner is not told, since nothing is lost but time. A
// snapshot that was offered and could not be restored is recorded as failed
// for its key (one start's worth of time per build, never a retry loop).

import { SITE_ROOT } from "../runtime/assets.js";

const CACHE = "pyodide-snapshot"; // not "mha-…": the service worker's activate deletes those
const RECORD = "mha-pyodide-snapshot";

// A Cache Storage key needs a URL; this one is never fetched.
function entryUrl(key) {
  return new URL(`pyodide-snapshot/${encodeURIComponent(key)}`, SITE_ROOT).href;
}

function storage() {
  try {
    return globalThis.localStorage || null;
  } catch {
    return null; // storage blocked for this site
  }
}

function readRecord() {
  try {
    const record = JSON.parse(storage()?.getItem(RECORD) || "null");
    return record && typeof record.key === "string" && record.key ? record : null;
  } catch {
    return null;
  }
}

function writeRecord(record) {
  try {
    storage()?.setItem(RECORD, JSON.stringify(record));
    return true;
  } catch {
    return false; // full or blocked: no snapshot, as if none was made
  }
}

function usable() {
  return Boolean(globalThis.caches && globalThis.crypto && crypto.subtle && storage());
}

async function sha256Hex(bytes) {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function dropEntries() {
  if (!globalThis.caches) return;
  try {
    await caches.delete(CACHE);
  } catch {
    // nothing stored, or storage gone: nothing to drop
  }
}

// What the page offers each worker (exercise/worker.js reads and checks the
// entry itself, before any learner code runs there, in parallel with loading
// Pyodide): {key, digest, size, cache, url} for the stored snapshot,
// {failedKey} when restoring that key failed before, {} when there is none.
export function snapshotOffer() {
  const record = readRecord();
  if (!record || !usable()) return {};
  if (record.failed) return { failedKey: record.key };
  if (typeof record.digest !== "string" || !Number.isInteger(record.size)) return {};
  return { key: record.key, digest: record.digest, size: record.size, cache: CACHE, url: entryUrl(record.key) };
}

// A worker found the entry missing or not matching its digest (replaced, or
// the browser dropped it): forget it, unless a newer one was stored meanwhile.
export async function forgetSnapshot(digest) {
  const record = readRecord();
  if (!record || record.digest !== digest) return;
  storage()?.removeItem(RECORD);
  await dropEntries();
}

// Keep the heap a worker made (before it ran anything of the learner's).
// Resolves to the new offer once stored; {} where this browser cannot keep it.
export async function saveSnapshot(key, packed) {
  if (!usable() || !key) return {};
  try {
    const digest = await sha256Hex(packed);
    storage().removeItem(RECORD); // no record points at a half-written entry
    await dropEntries(); // one snapshot at a time: the one of this build
    const cache = await caches.open(CACHE);
    await cache.put(entryUrl(key), new Response(packed, { headers: { "Content-Type": "application/octet-stream" } }));
    return writeRecord({ key, digest, size: packed.byteLength }) ? snapshotOffer() : {};
  } catch {
    storage()?.removeItem(RECORD);
    await dropEntries();
    return {};
  }
}

// A worker could not restore the snapshot for `key`: never offer (or make) one for that key again.
export async function markSnapshotFailed(key) {
  if (!key || !storage()) return;
  writeRecord({ key, failed: true });
  await dropEntries();
}
