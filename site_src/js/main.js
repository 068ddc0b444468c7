// Entry module: mounts every widget found on the page, and unmounts them when
// Material's instant navigation swaps the page.
//
// A widget is an element with data-mha-widget="NAME"; its module is
// js/<folder>/NAME.js (relative to this file) and exports mount(root) and dispose().
// Mounting the same root twice is a no-op; dispose() is called when the root
// has left the document. New widgets only need a module and an entry below.

const WIDGETS = {
  compare: "./compare/compare.js",
  quiz: "./lesson/quiz.js",
  walkthrough: "./lesson/walkthrough.js",
  two_source: "./lesson/two_source.js",
  head_explorer: "./lesson/head_explorer.js",
  worksheet: "./lesson/worksheet.js",
  "microgpt-watch": "./microgpt/watch.js",
  "microgpt-explore": "./microgpt/explore.js",
  "microgpt-exercise": "./microgpt/exercise.js",
  "microgpt-quiz": "./microgpt/quiz.js",
  "microgpt-source": "./microgpt/source.js",
  "microgpt-progress": "./microgpt/progress.js",
};

const mounted = new Map(); // root element -> module

async function mountAll() {
  // Dispose widgets whose root is no longer part of the page.
  for (const [root, mod] of [...mounted]) {
    if (!root.isConnected) {
      mounted.delete(root);
      try {
        if (mod) mod.dispose(root);
      } catch (err) {
        console.warn("widget dispose failed", err);
      }
    }
  }
  for (const root of document.querySelectorAll("[data-mha-widget]")) {
    if (mounted.has(root)) continue;
    const name = root.dataset.mhaWidget;
    const path = WIDGETS[name];
    if (!path) {
      console.warn(`unknown widget "${name}"`);
      continue;
    }
    mounted.set(root, null);
    try {
      const mod = await import(new URL(path, import.meta.url).href);
      mounted.set(root, mod);
      if (root.isConnected) await mod.mount(root);
    } catch (err) {
      mounted.delete(root);
      showWidgetFailure(root, err);
    }
  }
}

function showWidgetFailure(root, err) {
  const box = document.createElement("div");
  box.className = "mha-panel mha-panel--error";
  box.setAttribute("role", "alert");
  box.textContent = `This interactive part could not start (${err && err.message ? err.message : err}). ` +
    "Reload the page; if it keeps failing, try a current Chrome, Edge, Firefox or Safari.";
  root.replaceChildren(box);
}

function start() {
  // Material exposes document$ (emits on the first load and after every instant navigation).
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(() => { mountAll(); });
  } else {
    mountAll();
  }
}

start();
