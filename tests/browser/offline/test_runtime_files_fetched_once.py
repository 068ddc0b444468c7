"""Every runtime file (onnxruntime, Pyodide, the heap, the models) is sent at most once per visit.

Counted at the test server, which sees the page, its workers and the service
worker alike, on a first visit (fresh profile, service worker allowed) and a
repeat visit of every page, with the site served as ``export.serve`` serves it
by default: without compression. onnxruntime's 14 MB engine used to be sent
twice on a first visit of the compare page (the page's own download, for its
progress, and onnxruntime's), and a third time by the service worker, which
downloaded again any file the page reported used that the browser's HTTP cache
had not kept.
"""

from __future__ import annotations

import re
import threading

import pytest

from tests.browser_util import PageWatch, wait_ready, wait_until
from tests.browser.microgpt.test_exercise_page import WAIT_EXERCISE_JS

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("require_models")]

RUNTIME = re.compile(r"^/(?:vendor/(?:ort|pyodide|pyodide-heap)/|wasm_assets/models/[^/]+\.onnx$)")
PAGES = [
    "",
    "lesson/1-why-more-heads/",
    "lesson/2-multihead-operation/",
    "lesson/3-training-examples/",
    "lesson/4-model-training-generation/?prompt=Lily+found+a",
    "lesson/5-results/",
    "compare/",
    "microgpt/",
    "credits/",
]
NO_WEBGPU = "Object.defineProperty(Navigator.prototype, 'gpu', { get: () => undefined, configurable: true });"

# Every runtime file this page (not its workers: see each page's own wait) used
# is in the service worker's runtime cache.
STORED_JS = """async () => {
  if (!navigator.serviceWorker.controller) return false;
  const used = performance.getEntriesByType('resource').map((e) => e.name.split('#')[0])
    .filter((u) => /\\/vendor\\/(ort|pyodide|pyodide-heap)\\/|\\/wasm_assets\\/models\\/[^/]+\\.onnx/.test(u));
  const names = (await caches.keys()).filter((n) => n.startsWith('mha-runtime-'));
  if (!names.length) return false;
  const cache = await caches.open(names[0]);
  for (const url of used) if (!(await cache.match(url))) return false;
  return true;
}"""
PYODIDE_STORED_JS = """async () => {
  const names = (await caches.keys()).filter((n) => n.startsWith('mha-runtime-'));
  if (!names.length) return false;
  const have = new Set((await (await caches.open(names[0])).keys()).map((r) => r.url.split('/').pop()));
  return ['pyodide.mjs', 'pyodide.asm.mjs', 'pyodide.asm.wasm', 'python_stdlib.zip', 'heap.bin'].every((f) => have.has(f));
}"""


class Sent:
    """Response bodies the server sends for runtime files, per path."""

    def __init__(self, server):
        self.lock = threading.Lock()
        self.counts: dict[str, int] = {}
        self.handler = server.RequestHandlerClass.func  # make_server wraps the class in functools.partial
        self.original = self.handler.send_header
        sent, original = self, self.original

        def send_header(self_, keyword, value):
            path = self_.path.split("?")[0]
            if (
                keyword.lower() == "content-length"
                and int(value) > 0
                and self_.command == "GET"
                and RUNTIME.search(re.sub(r"/[0-9a-f]{12}/", "/", path))
            ):
                with sent.lock:
                    sent.counts[path] = sent.counts.get(path, 0) + 1
            original(self_, keyword, value)

        self.handler.send_header = send_header

    def snapshot(self) -> dict[str, int]:
        with self.lock:
            return dict(self.counts)

    def close(self):
        self.handler.send_header = self.original


@pytest.fixture
def counted(built_site):
    from export.serve import serve_in_thread

    server, url = serve_in_thread(built_site, isolation=True)  # no compression: export.serve's default
    sent = Sent(server)
    yield url, sent
    sent.close()
    server.shutdown()
    server.server_close()


def visit(context, url: str, path: str):
    page = context.new_page()
    watch = PageWatch(page)
    page.set_default_timeout(180000)
    page.goto(url + path)
    if path == "compare/":
        assert wait_ready(page)["ok"]
    if path == "microgpt/":
        page.evaluate(WAIT_EXERCISE_JS)
        wait_until(page, PYODIDE_STORED_JS, timeout_ms=180000, interval_ms=250)
    if path.startswith("lesson/4-"):  # the stepper starts at once with ?prompt=
        wait_until(page, "async () => window.mhaStepper && (await window.mhaStepper.ready, true)", timeout_ms=180000)
    wait_until(page, STORED_JS, timeout_ms=120000, interval_ms=250)
    watch.check()
    page.close()


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.split("?")[0].strip("/").split("/")[-1] or "home")
def test_each_runtime_file_is_sent_at_most_once_per_visit(browser, counted, path):
    url, sent = counted
    context = browser.new_context(service_workers="allow")
    context.add_init_script(NO_WEBGPU)  # as on a machine without a GPU: the 14 MB WebAssembly engine
    try:
        visit(context, url, path)
        first = sent.snapshot()
        assert all(n == 1 for n in first.values()), f"first visit: {first}"
        visit(context, url, path)
        again = sent.snapshot()
        repeat = {p: again[p] - first.get(p, 0) for p in again if again[p] != first.get(p, 0)}
        assert all(n <= 1 for n in repeat.values()), f"repeat visit: {repeat}"
        if path == "compare/":
            assert any(p.endswith("/ort-wasm-simd-threaded.wasm") for p in first), first  # the engine was counted
    finally:
        context.close()
