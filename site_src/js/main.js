// Entry module: mounts every widget found on the page, and unmounts them when
// Material's instant navigation swaps the page.
//
// A widget is an element with data-mha-widget="NAME"; its module is
// js/<folder>/NAME.js (relative to this file) and exports mount(root) and dispose().
// Mounting the same root twice is a no-op; dispose(root) is called for every
// mounted root once instant navigation has taken it out of the document (then
// a "mha:widget-disposed" event fires on document). New widgets only need a
// module and an entry below.

import { checkForUpdate, copyFromHttpCacheSoon, startServiceWorker } from "./runtime/offline.js";
import { watchStalls } from "./runtime/stall_notice.js";
import { dropStaleAnchor, revealInDoor } from "./runtime/address.js";

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
    document.dispatchEvent(
      new CustomEvent("mha:widget-disposed", { detail: { widget: root.dataset.mhaWidget, mounted: Boolean(mod) } }),
    );
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
    showWidgetFailure(
      root,
      `its script (${new URL(path, import.meta.url).pathname.split("/").slice(-2).join("/")}) could not be loaded`,
    );
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
  box.textContent =
    `This interactive part could not start: ${why}. ` +
    "Reload the page; if it keeps failing, try a current Chrome, Edge, Firefox or Safari, " +
    "or tell the site's maintainer.";
  root.replaceChildren(box);
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
      revealInDoor();
      checkForUpdate();
      copyFromHttpCacheSoon();
    });
  } else {
    mountAll();
    copyFromHttpCacheSoon();
  }
  addEventListener("hashchange", revealInDoor);
  startServiceWorker();
}

start();
