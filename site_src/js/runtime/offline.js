// The service worker's client: offline support and the new-build notice (main.js starts it).
//
// site/sw.js (site_src/hooks/service_worker.py) precaches the pages and caches
// the models, onnxruntime and Pyodide when a page first uses them. Files that
// were downloaded before the worker took control (the first visit) are handed
// to it by URL, so one visit is enough to work offline later.

const SITE_ROOT = new URL("../../", import.meta.url);
const RUNTIME_PREFIXES = ["vendor/ort/", "vendor/pyodide/", "wasm_assets/models/"];
let registration = null;
let lastUpdateCheck = 0;
let pendingUrls = new Set();

function isRuntimeUrl(href) {
  return RUNTIME_PREFIXES.some((prefix) => href.startsWith(new URL(prefix, SITE_ROOT).href));
}

// Files the page's workers downloaded are invisible here; the service worker
// copies any runtime file the HTTP cache holds (see site_src/hooks/service_worker.js).
function copyFromHttpCache() {
  const controller = navigator.serviceWorker && navigator.serviceWorker.controller;
  if (controller) controller.postMessage({ type: "CACHE_FROM_HTTP_CACHE" });
}

// Once per page: the sweep costs the service worker and the browser's network
// service a request per runtime file not yet stored, so on the exercise's page
// it waits until that page's first Python is ready (microgpt/python_first.js
// leaves that promise on the global object; elsewhere there is none).
export function copyFromHttpCacheSoon() {
  Promise.resolve(globalThis.mhaPythonFirst).then(copyFromHttpCache);
}

function flushUsedFiles() {
  const controller = navigator.serviceWorker.controller;
  if (!controller || !pendingUrls.size) return;
  controller.postMessage({ type: "CACHE_USED", urls: [...pendingUrls] });
  pendingUrls = new Set();
}

function watchUsedFiles() {
  if (typeof PerformanceObserver !== "function") return;
  const note = (entries) => {
    for (const entry of entries) if (isRuntimeUrl(entry.name)) pendingUrls.add(entry.name.split("#")[0]);
    flushUsedFiles();
  };
  try {
    new PerformanceObserver((list) => note(list.getEntries())).observe({ type: "resource", buffered: true });
  } catch {
    note(performance.getEntriesByType("resource"));
  }
}

export async function startServiceWorker() {
  if (!("serviceWorker" in navigator) || !window.isSecureContext) return;
  watchUsedFiles();
  let reloading = false;
  navigator.serviceWorker.addEventListener("controllerchange", () => {
    if (updateAccepted && !reloading) {
      reloading = true;
      location.reload();
      return;
    }
    flushUsedFiles();
    copyFromHttpCache();
  });
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") copyFromHttpCache();
    else checkForUpdate(); // a tab left open for a while asks whether a new build is live
  });
  try {
    registration = await navigator.serviceWorker.register(new URL("sw.js", SITE_ROOT).href, {
      scope: SITE_ROOT.pathname,
    });
  } catch (err) {
    // The site works without it, only not offline.
    console.warn(`offline support is off: ${err && err.message ? err.message : err}`);
    return;
  }
  if (!registration) return; // a browser set to block service workers answers with nothing
  lastUpdateCheck = Date.now();
  if (registration.waiting && navigator.serviceWorker.controller) offerUpdate(registration.waiting);
  registration.addEventListener("updatefound", () => {
    const worker = registration.installing;
    if (!worker) return;
    worker.addEventListener("statechange", () => {
      // Installed while another build controls this page: a new version waits.
      if (worker.state === "installed" && navigator.serviceWorker.controller) offerUpdate(worker);
    });
  });
}

// A full page load makes the browser look for a new sw.js; instant navigation
// does not, so look at most once a minute while the learner moves between pages.
export function checkForUpdate() {
  if (!registration || Date.now() - lastUpdateCheck < 60000) return;
  lastUpdateCheck = Date.now();
  registration.update().catch(() => {});
}

// runtime/assets.js found this page's files replaced by a new build (a deploy):
// look for the new service worker now, which shows the notice in every open
// tab; without a service worker this tab shows it alone.
window.addEventListener("mha:new-build", () => {
  if (registration) {
    lastUpdateCheck = Date.now();
    if (registration.waiting) offerUpdate(registration.waiting);
    // Nothing installing or waiting: this page's worker is already the new one
    // (another tab accepted it), so a plain reload is the update.
    registration
      .update()
      .catch(() => {})
      .then(() => {
        if (!registration.installing && !registration.waiting) offerUpdate(null);
      });
  } else {
    offerUpdate(null);
  }
});

let updateAccepted = false;

// worker: the waiting service worker of the new build, or null (no service
// worker here: a plain reload fetches the new build).
function offerUpdate(worker) {
  if (document.querySelector(".mha-update")) return;
  const box = document.createElement("div");
  box.className = "mha-update";
  box.setAttribute("role", "status");
  const text = document.createElement("p");
  text.textContent = "A new version of this lesson is ready.";
  const reload = document.createElement("button");
  reload.type = "button";
  reload.className = "md-button md-button--primary";
  reload.textContent = "Reload to update";
  reload.addEventListener("click", () => {
    updateAccepted = true;
    reload.disabled = true;
    reload.textContent = "Updating…";
    if (worker && worker.state === "installed") worker.postMessage({ type: "SKIP_WAITING" });
    else location.reload(); // no worker, or another tab already switched to it
  });
  const later = document.createElement("button");
  later.type = "button";
  later.className = "md-button";
  later.textContent = "Later";
  later.addEventListener("click", () => box.remove());
  box.append(text, reload, later);
  document.body.append(box);
}
