"""A first visit downloads each Pyodide file once, shows its progress in bytes and percent, and a repeat visit none.

On a first visit no service worker controls the page yet, so the exercise's
worker downloads Pyodide itself and hands a copy to the service worker
(HANDOFF_CACHE in site_src/js/microgpt/exercise/downloads.js and
site_src/hooks/service_worker.js), which used to download the same files again.
The server counts every response body it sends for vendor/pyodide/.
"""

from __future__ import annotations

import re
import threading

import pytest

from tests.browser_util import PageWatch, wait_until
from tests.browser.microgpt.test_exercise_page import WAIT_EXERCISE_JS

pytestmark = pytest.mark.browser

# Pyodide's files and the Python heap the site ships (vendor/pyodide-heap/, site_src/hooks/python_heap.py).
PYODIDE_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
    "heap.bin",
)
CACHED_JS = """(files) => caches.keys().then(async (names) => {
  const have = new Set();
  for (const name of names.filter((n) => n.startsWith('mha-runtime-')))
    for (const r of await (await caches.open(name)).keys()) have.add(r.url.split('/').pop());
  return files.every((f) => have.has(f));
})"""


class Bodies:
    """Counts the response bodies a server sends per path (Content-Length > 0)."""

    def __init__(self, server):
        self.lock = threading.Lock()
        self.sent: dict[str, int] = {}
        self.handler = server.RequestHandlerClass.func  # make_server wraps the class in functools.partial
        self.original = self.handler.send_header
        counter, original = self, self.original

        def send_header(self_, keyword, value):
            if keyword.lower() == "content-length" and int(value) > 0 and self_.command != "HEAD":
                with counter.lock:
                    path = self_.path.split("?")[0]
                    counter.sent[path] = counter.sent.get(path, 0) + 1
            original(self_, keyword, value)

        self.handler.send_header = send_header

    def pyodide(self) -> dict[str, int]:
        with self.lock:
            # vendor/pyodide(-heap)/<digest>/<name>: the build versions the folder (tests/site_paths.py)
            return {
                name: sum(
                    n
                    for p, n in self.sent.items()
                    if re.search(r"/vendor/pyodide(-heap)?/", p) and p.endswith("/" + name)
                )
                for name in PYODIDE_FILES
            }

    def close(self):
        self.handler.send_header = self.original


@pytest.fixture
def counted_site(built_site):
    from export.serve import serve_in_thread

    server, url = serve_in_thread(built_site, isolation=True, compress=True)
    bodies = Bodies(server)
    yield url, bodies
    bodies.close()
    server.shutdown()
    server.server_close()


def test_a_first_visit_downloads_each_pyodide_file_once(browser, counted_site):
    url, bodies = counted_site
    context = browser.new_context(service_workers="allow")
    try:
        page = context.new_page()
        watch = PageWatch(page)
        page.set_default_timeout(180000)
        seen = []
        page.expose_function("noteStatus", lambda text: seen.append(text))
        page.add_init_script("""new MutationObserver(() => {
          const s = document.querySelector('.mgpt-ex__status');
          if (s) window.noteStatus(s.textContent);
        }).observe(document, { subtree: true, childList: true, characterData: true });""")
        page.goto(url + "microgpt/")
        assert page.evaluate(WAIT_EXERCISE_JS)["start"] == "shipped"  # the heap was downloaded and restored
        page.wait_for_function("() => navigator.serviceWorker.controller !== null")
        wait_until(page, CACHED_JS, list(PYODIDE_FILES), timeout_ms=180000, interval_ms=250)
        first = bodies.pyodide()
        assert all(first[name] == 1 for name in PYODIDE_FILES), first
        # Progress on the way: bytes and percent of everything the exercise waits for.
        assert any("MB (" in text and "%" in text for text in seen), seen[-5:]
        page.close()
        again = context.new_page()
        again.set_default_timeout(180000)
        again.goto(url + "microgpt/")
        again.evaluate(WAIT_EXERCISE_JS)
        assert bodies.pyodide() == first, (first, bodies.pyodide())  # nothing more was sent
        watch.check()
    finally:
        context.close()
