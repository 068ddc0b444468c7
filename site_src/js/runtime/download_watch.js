// A download that stops says so, in words, and can be started again.
//
// A line can stall without failing: the connection stays open and no byte
// comes (weak Wi-Fi, a proxy holding the answer), and fetch() neither resolves
// nor rejects, so a progress bar would sit at 88 % for ever. watchedFetch()
// watches a runtime file's download (a model, onnxruntime's engine): after
// STALL_MS in which a byte was awaited and none came, it is listed as stalled
// (onStalls: what, and how far it got), and retryStalled() aborts it and asks
// again. The bytes that came already are not delivered twice (the new
// answer's first bytes are skipped), so whoever reads the body reads one
// file, only later. A stalled download that moves again by itself leaves the list.
//
// Where the service worker serves the page, it reads a runtime file whole, to
// check its digest, before the page gets a byte of it; meanwhile it tells the
// page what has arrived on PROGRESS_CHANNEL (site_src/hooks/service_worker.js),
// which counts here as progress and as a sign of life.

export const STALL_MS = 15000;
export const PROGRESS_CHANNEL = "mha-download-progress";

// One list per page, on the global object: the exercise's early start (microgpt/prestart.js)
// runs as a bundle with its own copy of this module, and its stalls belong in the same notice.
const shared =
  globalThis.mhaDownloadStalls || (globalThis.mhaDownloadStalls = { stalls: new Map(), events: new EventTarget() });
const stalls = shared.stalls; // download -> {what, loaded, total, retry}
const events = shared.events;

function changed() {
  events.dispatchEvent(new Event("change"));
}

// fn(list of {what, loaded, total}) now and whenever a download stalls or moves again; returns unsubscribe.
export function onStalls(fn) {
  const listener = () => fn([...stalls.values()]);
  events.addEventListener("change", listener);
  listener();
  return () => events.removeEventListener("change", listener);
}

// Every stalled download, aborted and asked for again.
export function retryStalled() {
  for (const retry of new Set([...stalls.values()].map((stall) => stall.retry))) retry();
}

// The stalls a worker reported (the list its own onStalls gave), shown with the page's;
// retry() asks that worker to retry them. An empty list clears them.
export function relayStalls(from, list, retry) {
  for (const [key, stall] of stalls) if (stall.from === from) stalls.delete(key);
  for (const { what, loaded, total } of list)
    stalls.set({}, { what: String(what), loaded: Number(loaded) || 0, total: Number(total) || 0, from, retry });
  changed();
}

function percentOf({ loaded, total }) {
  return total ? `${Math.min(99, Math.floor((100 * loaded) / total))} %` : `${(loaded / 1e6).toFixed(1)} MB`;
}

// The words for a list of stalled downloads.
export function stallText(list) {
  const seconds = Math.round(STALL_MS / 1000);
  const advice = `(no data for ${seconds} s): check your connection, then press Retry.`;
  if (list.length === 1) return `The download of ${list[0].what} has stalled at ${percentOf(list[0])} ${advice}`;
  const each = list.map((s) => `${s.what} (at ${percentOf(s)})`);
  return `The downloads of ${each.slice(0, -1).join(", ")} and ${each[each.length - 1]} have stalled ${advice}`;
}

// ------------------------------------------------------------ the service worker's counts

let channel = null;
const heard = new Map(); // URL -> Set of fn({loaded})

function hearServiceWorker(url, fn) {
  if (typeof BroadcastChannel !== "function") return () => {};
  if (!channel) {
    channel = new BroadcastChannel(PROGRESS_CHANNEL);
    channel.onmessage = (event) => {
      const data = event.data || {};
      for (const listener of heard.get(data.url) || []) listener(data);
    };
  }
  if (!heard.has(url)) heard.set(url, new Set());
  heard.get(url).add(fn);
  return () => {
    const set = heard.get(url);
    if (set) set.delete(fn);
    if (set && !set.size) heard.delete(url);
  };
}

// ------------------------------------------------------------ the watch

// fetch(url) whose answer's body stalls in words and survives a retry.
// what: the file in words; total: its bytes when known (or a function giving them, 0 while not known);
// onProgress({loaded, total});
// fetchFn: the fetch to use (onnxruntime's engine bypasses a wrapped global fetch);
// init: the request's options (its signal, when given, ends the download for good).
// Resolves to the Response (an answer that is not ok is returned as it came);
// rejects as fetch() does when the first request fails.
export function watchedFetch(
  url,
  { fetchFn = (...args) => fetch(...args), init = {}, what = url, total = 0, onProgress = () => {} } = {},
) {
  let controller = null;
  let delivered = 0; // bytes handed to the body's reader
  let heardOf = 0; // the most bytes the service worker said it holds
  let skip = 0; // bytes of a new answer already delivered from an earlier one
  let timer = null;
  let waiting = false; // a byte (or the answer's head) is awaited now
  let done = false;
  let retried = null; // resolves when retry() is called while the answer's head is awaited
  let restarting = false;
  const key = {};
  const loaded = () => Math.max(delivered, heardOf);
  const size = () => (typeof total === "function" ? total() : total);
  const report = () => {
    try {
      onProgress({ loaded: loaded(), total: size() });
    } catch (err) {
      console.warn(err);
    }
  };
  const unstall = () => {
    if (stalls.delete(key)) changed();
  };
  const stalled = () => {
    if (done || !waiting) return;
    stalls.set(key, { what, loaded: loaded(), total: size(), retry });
    changed();
  };
  const wait = (on) => {
    waiting = on;
    clearTimeout(timer);
    if (on && !done) timer = setTimeout(stalled, STALL_MS);
  };
  const alive = () => {
    unstall();
    if (waiting) wait(true);
  };
  const stopHearing = hearServiceWorker(url, (data) => {
    if (Number.isFinite(data.loaded) && data.loaded > heardOf) {
      heardOf = data.loaded;
      alive();
      report();
    }
  });
  const end = () => {
    done = true;
    wait(false);
    unstall();
    stopHearing();
  };
  function retry() {
    if (done) return;
    unstall();
    restarting = true;
    if (controller) controller.abort();
    if (retried) retried();
    wait(true);
  }
  // One request, and its answer's head; a retry meanwhile starts another.
  async function head(again) {
    for (;;) {
      controller = new AbortController();
      if (done) controller.abort();
      const request = fetchFn(url, { ...init, ...(again ? { cache: "reload" } : {}), signal: controller.signal });
      request.catch(() => {});
      const asked = new Promise((resolve) => {
        retried = () => resolve("retry");
      });
      wait(true);
      const answer = await Promise.race([request, asked]);
      retried = null;
      if (answer === "retry") {
        if (done) throw new DOMException("The download was aborted.", "AbortError"); // by the caller's signal
        again = true;
        restarting = false;
        continue;
      }
      restarting = false;
      wait(false);
      return answer;
    }
  }
  if (init.signal) {
    const abort = () => {
      end();
      if (controller) controller.abort();
      if (retried) retried();
    };
    if (init.signal.aborted) done = true;
    else init.signal.addEventListener("abort", abort, { once: true });
  }
  return (async () => {
    let response;
    try {
      response = await head(false);
    } catch (err) {
      end();
      throw err;
    }
    if (!response.ok || !response.body) {
      end();
      return response;
    }
    let reader = response.body.getReader();
    const body = new ReadableStream({
      async pull(stream) {
        for (;;) {
          let part;
          wait(true);
          try {
            part = await reader.read();
          } catch (err) {
            if (!restarting || done) {
              end();
              throw err;
            }
            const again = await head(true).catch((e) => e);
            if (again instanceof Error || !again.ok || !again.body) {
              end();
              throw again instanceof Error
                ? again
                : new Error(`${what} could not be downloaded again (HTTP ${again.status})`);
            }
            reader = again.body.getReader();
            skip = delivered;
            continue;
          }
          wait(false);
          if (part.done) {
            end();
            stream.close();
            return;
          }
          alive();
          let chunk = part.value;
          if (skip) {
            const drop = Math.min(skip, chunk.byteLength);
            skip -= drop;
            chunk = chunk.subarray(drop);
            if (!chunk.byteLength) continue;
          }
          delivered += chunk.byteLength;
          report();
          stream.enqueue(chunk);
          return;
        }
      },
      cancel(reason) {
        end();
        if (controller) controller.abort();
        return reader.cancel(reason).catch(() => {});
      },
    });
    const headers = new Headers(response.headers);
    headers.delete("content-encoding"); // the body is already decoded
    headers.delete("content-length");
    const watched = new Response(body, { status: response.status, statusText: response.statusText, headers });
    Object.defineProperty(watched, "url", { value: response.url }); // what relative paths resolve against
    return watched;
  })();
}
