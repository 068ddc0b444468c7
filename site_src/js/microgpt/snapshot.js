// The exercise's Python memory snapshots, which make a Run start fast: the one the site ships
// and the one kept in this browser.
//
// The site ships a heap made at build time (vendor/pyodide-heap/heap.bin,
// site_src/hooks/python_heap.py); the page offers it to every worker with
// this build's SHA-256 of it (runtime/assets.js fileDigest), and the worker
// checks that digest before restoring it. One that fails is not offered again
// in this browser (SHIPPED_FAILED), and the worker that found out starts
// Python normally and makes this browser's own heap instead:
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

import { SITE_ROOT, fileDigest, fileSize, sha256Hex, siteUrl } from "../runtime/assets.js";

const CACHE = "pyodide-snapshot"; // not "mha-…": the service worker's activate deletes those
const RECORD = "mha-pyodide-snapshot";
const SHIPPED = "vendor/pyodide-heap/heap.bin";
const SHIPPED_FAILED = "mha-pyodide-heap-failed"; // the digest of a shipped heap that could not be used

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

async function dropEntries() {
  if (!globalThis.caches) return;
  try {
    await caches.delete(CACHE);
  } catch {
    // nothing stored, or storage gone: nothing to drop
  }
}

// What the page offers each worker (exercise/worker.js reads and checks the
// heaps itself, before any learner code runs there, in parallel with loading
// Pyodide): {key, digest, size, cache, url} for the stored snapshot,
// {failedKey} when restoring that key failed before, nothing of these when
// there is none; and `shipped`: {url, digest, size} of the site's heap, or null.
export function snapshotOffer() {
  const shipped = shippedHeap();
  const record = readRecord();
  if (!record || !usable()) return { shipped };
  if (record.failed) return { failedKey: record.key, shipped };
  if (typeof record.digest !== "string" || !Number.isInteger(record.size)) return { shipped };
  return {
    key: record.key,
    digest: record.digest,
    size: record.size,
    cache: CACHE,
    url: entryUrl(record.key),
    shipped,
  };
}

function shippedHeap() {
  const digest = fileDigest(SHIPPED);
  const size = fileSize(SHIPPED);
  if (!digest || !size) return null; // a build without one (the scripts run from site_src/)
  try {
    if (storage()?.getItem(SHIPPED_FAILED) === digest) return null;
  } catch {
    // storage blocked: offer it every time
  }
  return { url: siteUrl(SHIPPED), digest, size };
}

// A worker could not use the shipped heap with this digest: not offered again.
export function markShippedFailed(digest) {
  try {
    storage()?.setItem(SHIPPED_FAILED, String(digest));
  } catch {
    // full or blocked: it is tried (and falls back) again next time
  }
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
// Resolves to the new offer once stored (without a saved heap where this browser cannot keep it).
export async function saveSnapshot(key, packed) {
  if (!usable() || !key) return snapshotOffer();
  try {
    const digest = await sha256Hex(packed);
    storage().removeItem(RECORD); // no record points at a half-written entry
    await dropEntries(); // one snapshot at a time: the one of this build
    const cache = await caches.open(CACHE);
    await cache.put(entryUrl(key), new Response(packed, { headers: { "Content-Type": "application/octet-stream" } }));
    writeRecord({ key, digest, size: packed.byteLength });
    return snapshotOffer();
  } catch {
    storage()?.removeItem(RECORD);
    await dropEntries();
    return snapshotOffer();
  }
}

// A worker could not restore the snapshot for `key`: never offer (or make) one for that key again.
export async function markSnapshotFailed(key) {
  if (!key || !storage()) return;
  writeRecord({ key, failed: true });
  await dropEntries();
}

// What a starting worker said about start-ups (a SNAPSHOT_NEWS message) -> the
// promise of the next offer, or null when it changes nothing. current: the offer being changed now (one change of
// the stored snapshot at a time); ready: the worker's start; betweenJobs(task):
// runs task when no job is running (the runner's), so storing a heap never takes
// the processor from a job, nor delays "ready".
export const SNAPSHOT_NEWS = new Set(["heap-failed", "snapshot-made", "snapshot-missing", "snapshot-failed"]);

export function snapshotNews(msg, current, ready, betweenJobs) {
  const after = current.catch(() => ({}));
  if (msg.type === "heap-failed") {
    if (!msg.digest) return null;
    console.warn(`Python's shipped start-up could not be used (${msg.reason}); it starts the normal way.`);
    markShippedFailed(String(msg.digest));
    return after.then(() => ({ ...snapshotOffer(), shipped: null }));
  }
  if (!msg.key) return null;
  const key = String(msg.key);
  if (msg.type === "snapshot-made") {
    if (!(msg.packed instanceof Uint8Array)) return null;
    const made = msg.packed;
    return Promise.all([after, ready.catch(() => {})])
      .then(() => betweenJobs(() => saveSnapshot(key, made)))
      .catch(snapshotOffer);
  }
  if (msg.type === "snapshot-missing")
    return after.then(() => forgetSnapshot(String(msg.digest))).then(snapshotOffer, snapshotOffer);
  console.warn(`Python's saved start could not be used (${msg.reason}); it starts the normal way.`);
  const failed = () => ({ ...snapshotOffer(), failedKey: key });
  return after.then(() => markSnapshotFailed(key)).then(failed, failed);
}
