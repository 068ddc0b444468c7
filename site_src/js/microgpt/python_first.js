// On the exercise's page, the exercise's Python goes first: it is what the learner came for.
//
// A repeat visit has both cores of a 2-core laptop busy for its first second
// (bench/RESULTS.md): the page's own thread, the first Python worker (started
// by prestart.js from the page's head) and the threads compiling for it. Work
// the reader does not need in that second (the theme's search index, the
// Explore widget's charts two screens down, the source listing at the foot of
// the page) waits until that Python is ready
// or has failed, LATEST_MS at the latest, or until the reader goes to it.
//
// prestart.js runs as a bundle of its own, with its own copy of this module,
// so the promise is handed to the page's modules on the global object (where
// runtime/offline.js, the service worker's client, also reads it: its sweep of
// the HTTP cache waits for it).

const LATEST_MS = 5000;
const KEY = "mhaPythonFirst";

// prestart.js: `ready` is the first Python's readiness; returns the promise afterPython() gives.
export function pythonFirst(ready) {
  globalThis[KEY] = Promise.race([
    Promise.resolve(ready).then(
      () => {},
      () => {},
    ),
    new Promise((resolve) => setTimeout(resolve, LATEST_MS)),
  ]);
  return globalThis[KEY];
}

// Resolves once the page's first Python has settled (or LATEST_MS passed); at
// once on a page where none was started from the head.
function afterPython() {
  return globalThis[KEY] || Promise.resolve();
}

// Resolves when a widget below the first screen may be built: once the first
// Python has settled, or as soon as the reader comes near `element`.
export function whenWanted(element) {
  return Promise.race([afterPython(), nearViewport(element)]);
}

// Resolves when `element` comes within a screen's height of the viewport.
function nearViewport(element) {
  if (typeof IntersectionObserver !== "function") return Promise.resolve();
  return new Promise((resolve) => {
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((entry) => entry.isIntersecting)) {
          observer.disconnect();
          resolve();
        }
      },
      { rootMargin: "100% 0px" },
    );
    observer.observe(element);
  });
}
