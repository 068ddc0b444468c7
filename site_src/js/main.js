// Entry module: mounts every widget found on the page, and unmounts them when
// Material's instant navigation swaps the page.
//
// A widget is an element with data-mha-widget="NAME"; its module is
// js/<folder>/NAME.js (relative to this file) and exports mount(root) and dispose().
// Mounting the same root twice is a no-op; dispose(root) is called for every
// mounted root once instant navigation has taken it out of the document (then
// a "mha:widget-disposed" event fires on document). New widgets only need a
// module and an entry below.

import { watchStalls } from "./runtime/stall_notice.js";

const WIDGETS = {
  compare: "./compare/compare.js",
  quiz: "./lesson/quiz.js",
  walkthrough: "./lesson/walkthrough.js",
  two_source: "./lesson/two_source.js",
  toy_replay: "./lesson/toy_replay.js",
  message_plane: "./lesson/message_plane.js",
  head_growth: "./lesson/head_growth.js",
  head_explorer: "./lesson/head_explorer.js",
  head_contributions: "./lesson/head_contributions.js",
  worksheet: "./lesson/worksheet.js",
  query_keys: "./lesson/query_keys.js",
  predict_check: "./lesson/predict_check.js",
  token_playground: "./lesson/token_playground.js",
  stepper: "./lesson/stepper.js",
  first_screen: "./home/first_screen.js",
  "microgpt-watch": "./microgpt/watch.js",
  "microgpt-explore": "./microgpt/explore.js",
  "microgpt-exercise": "./microgpt/exercise.js",
  "microgpt-source": "./microgpt/source.js",
  "microgpt-progress": "./microgpt/progress.js",
  "build-exercise": "./build/exercise.js",
};

const mounted = new Map(); // root element -> module (null while its module loads)

// The theme override (overrides/main.html) shows a fallback message in every
// widget when this file never runs; this mark tells it the script started.
document.documentElement.dataset.mhaMain = "started";

function disposeLeftWidgets() {
  for (const [root, mod] of [...mounted]) {
    if (root.isConnected) continue;
    mounted.delete(root);
    try {
      if (mod && typeof mod.dispose === "function") mod.dispose(root);
    } catch (err) {
      console.warn("widget dispose failed", err);
    }
    // Lets tests (and anything else) see that every widget of a left page was disposed.
    document.dispatchEvent(new CustomEvent("mha:widget-disposed", { detail: { widget: root.dataset.mhaWidget, mounted: Boolean(mod) } }));
  }
}

// Set once the page is being left (pagehide): the widgets are disposed, which
// stops their workers, and a module or file that fails from then on (the
// browser cancels their loads) is no error the learner should hear about.
let leaving = false;

function leave(event) {
  if (event.persisted) return; // kept in the back/forward cache: it comes back as it was
  leaving = true;
  for (const [root, mod] of [...mounted]) {
    mounted.delete(root);
    try {
      if (mod && typeof mod.dispose === "function") mod.dispose(root);
    } catch {
      // leaving anyway
    }
  }
}

window.addEventListener("pagehide", leave);

async function mountOne(root) {
  const name = root.dataset.mhaWidget;
  const path = WIDGETS[name];
  if (!path) {
    console.warn(`unknown widget "${name}"`);
    return;
  }
  mounted.set(root, null);
  let mod;
  try {
    mod = await import(new URL(path, import.meta.url).href);
  } catch (err) {
    mounted.delete(root);
    if (leaving) return;
    console.warn(err);
    showWidgetFailure(root, `its script (${new URL(path, import.meta.url).pathname.split("/").slice(-2).join("/")}) could not be loaded`);
    return;
  }
  // The page may have been left while the module loaded: then it is not mounted at all.
  if (!root.isConnected || leaving) {
    mounted.delete(root);
    return;
  }
  mounted.set(root, mod);
  try {
    await mod.mount(root);
  } catch (err) {
    if (leaving) return;
    console.warn(err);
    showWidgetFailure(root, `it stopped with an error (${err && err.message ? err.message : err})`);
  }
}

// Widgets mount side by side, so a slow one (the models) never holds up the others.
function mountAll() {
  disposeLeftWidgets();
  const roots = [...document.querySelectorAll("[data-mha-widget]")].filter((root) => !mounted.has(root));
  return Promise.all(roots.map(mountOne));
}

function showWidgetFailure(root, why) {
  const box = document.createElement("div");
  box.className = "mha-panel mha-panel--error";
  box.setAttribute("role", "alert");
  box.textContent = `This interactive part could not start: ${why}. ` +
    "Reload the page; if it keeps failing, try a current Chrome, Edge, Firefox or Safari, " +
    "or tell the site's maintainer.";
  root.replaceChildren(box);
}

// Instant navigation keeps the address's #fragment when the page it leads to
// has no element with that id (a link to /compare/ clicked on /microgpt/#watch
// showed /compare/#watch). A fragment that names nothing on this page is dropped.
// The fragment is whatever the address holds: "#%" or "#%E0%A4%A" are not
// valid percent-encoding, so they are read as they are, never thrown on.
export function fragmentId(hash) {
  const raw = String(hash || "").replace(/^#/, "");
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

function dropStaleAnchor() {
  const id = fragmentId(location.hash);
  if (id && !document.getElementById(id)) {
    history.replaceState(history.state, "", location.pathname + location.search);
  }
}

function start() {
  watchStalls(); // a download that stops, on any page, says so with a Retry button
  // Material exposes document$ (emits on the first load and after every instant navigation).
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(() => {
      try {
        dropStaleAnchor();
      } catch (err) {
        console.warn(err); // an odd address must never keep the widgets from starting
      }
      mountAll();
      checkForUpdate();
      copyFromHttpCacheSoon();
    });
  } else {
    mountAll();
    copyFromHttpCacheSoon();
  }
  startServiceWorker();
}

// ------------------------------------------------------------ offline support
//
// site/sw.js (site_src/hooks/service_worker.py) precaches the pages and caches
// the models, onnxruntime and Pyodide when a page first uses them. Files that
// were downloaded before the worker took control (the first visit) are handed
// to it by URL, so one visit is enough to work offline later.

const SITE_ROOT = new URL("../", import.meta.url);
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
function copyFromHttpCacheSoon() {
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

async function startServiceWorker() {
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
    registration = await navigator.serviceWorker.register(new URL("sw.js", SITE_ROOT).href, { scope: SITE_ROOT.pathname });
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
function checkForUpdate() {
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
    registration.update().catch(() => {}).then(() => {
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

start();
