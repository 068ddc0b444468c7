// On the exercise page, the theme's search worker starts once Python is ready.
//
// Material builds its search index in a worker of its own as the page loads:
// about 0.6 s of CPU, which on a 2-core laptop is taken from the exercise's
// Python worker just while it starts (bench/RESULTS.md). Here the
// theme's `new Worker(search)` gets a stand-in at once; the real worker is
// created when `go` settles (python_first.js: Python ready or failed, or
// LATEST_MS passed), or as soon as the reader goes to the search box. What the
// theme posts meanwhile (the index, early queries) is kept and delivered in order,
// so nothing typed is lost; the search box says "Initializing search" until
// then, as it does while any index builds.

const SEARCH_WORKER = /\/assets\/javascripts\/workers\/search\.[^/]*\.js$/;

export function searchAfterPython(go) {
  const RealWorker = globalThis.Worker;
  if (typeof RealWorker !== "function") return;
  const restore = () => {
    if (globalThis.Worker === Worker) globalThis.Worker = RealWorker;
  };
  function Worker(url, options) {
    if (!new.target) throw new TypeError("Failed to construct 'Worker': Please use the 'new' operator.");
    let path = "";
    try {
      path = new URL(String(url), document.baseURI).pathname;
    } catch {
      // not a URL: the real constructor says why
    }
    if (!SEARCH_WORKER.test(path)) return Reflect.construct(RealWorker, [url, options]);
    restore(); // only the theme's one search worker waits
    return standIn(RealWorker, url, options, go);
  }
  Worker.prototype = RealWorker.prototype;
  globalThis.Worker = Worker;
  go.then(restore); // a page whose theme made no search worker
}

// An object the theme can use as its worker (postMessage, terminate, message
// events) until the real one exists, which is made when `go` settles.
function standIn(RealWorker, url, options, go) {
  const stand = new EventTarget();
  const queue = [];
  let real = null;
  let ended = false;
  const emit = (event) => {
    stand.dispatchEvent(event);
    const handler = stand[`on${event.type}`];
    if (typeof handler === "function") handler.call(stand, event);
  };
  const start = () => {
    if (real || ended) return;
    document.removeEventListener("focusin", onFocus, true);
    real = new RealWorker(url, options);
    real.addEventListener("message", (e) => emit(new MessageEvent("message", { data: e.data })));
    real.addEventListener("messageerror", () => emit(new MessageEvent("messageerror")));
    real.addEventListener("error", (e) =>
      emit(new ErrorEvent("error", { message: e.message, filename: e.filename, lineno: e.lineno, colno: e.colno })),
    );
    for (const [message, transfer] of queue.splice(0)) real.postMessage(message, transfer);
  };
  const onFocus = (event) => {
    if (event.target instanceof Element && event.target.closest(".md-search")) start();
  };
  stand.postMessage = (message, transfer = []) => {
    if (real) real.postMessage(message, transfer);
    else if (!ended) queue.push([message, transfer]);
  };
  stand.terminate = () => {
    ended = true;
    queue.length = 0;
    if (real) real.terminate();
  };
  document.addEventListener("focusin", onFocus, true);
  go.then(start);
  return stand;
}
