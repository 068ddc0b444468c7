"""A damaged runtime file is never kept: the service worker (and the exercise's
worker, which reads Pyodide's files straight from Cache Storage) checks every
copy against its digest in build.json before storing it and before using it.

The faults are made at the test server, which sees the page, its workers and
the service worker alike: a captive portal's HTML page answering
pyodide.asm.wasm with status 200 on the first visit, a truncated
pyodide.asm.mjs or python_stdlib.zip, a download cut halfway (no length, the
connection closed); and in the cache, a stored pyodide.mjs or pyodide.asm.wasm
rewritten by another page of the same origin. Each used to stay for good: the
exercise hung or failed on every later visit. Learner code that asks for
runtime files under other query strings does not grow the cache either.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import pytest

from tests.browser_util import PageWatch, wait_until
from tests.browser.microgpt.test_exercise_page import CHECK_JS, WAIT_EXERCISE_JS
from tests.site_paths import built_file

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[3]
SOLUTION = (ROOT / "site_src" / "pyodide" / "solution.py").read_text()
STARTER = (ROOT / "site_src" / "pyodide" / "starter.py").read_text()
PORTAL = b"<!doctype html><title>Sign in</title><p>Sign in to the caf\xc3\xa9's Wi-Fi to continue.</p>"
# Messages of a first visit that met a broken file; what the learner reads is checked on screen.
FAULT_CONSOLE = (r"Failed to load resource", r"WebAssembly", r"wasm", r"pyodide", r"Pyodide", r"Python", r"502")

RUNTIME_CACHE_JS = """async (name) => {
  const names = (await caches.keys()).filter((n) => n.startsWith('mha-runtime-'));
  const out = {};
  for (const n of names) for (const r of await (await caches.open(n)).keys()) {
    if (!r.url.includes('/' + name)) continue;
    const bytes = new Uint8Array(await (await (await caches.open(n)).match(r)).arrayBuffer());
    const digest = await crypto.subtle.digest('SHA-256', bytes);
    out[r.url] = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
  }
  return out;
}"""


class Faults:
    """Serves the next GETs of a file broken, one fault per request: "portal",
    "truncated" (half, with a matching length) or "cut" (half, no length, closed)."""

    def __init__(self, server):
        self.lock = threading.Lock()
        self.planned: dict[str, list[str]] = {}
        self.served: list[tuple[str, str]] = []
        handler = server.RequestHandlerClass.func
        original = handler.do_GET
        faults = self

        def do_GET(self_):  # noqa: N802
            name = self_.path.split("?")[0].rsplit("/", 1)[-1]
            with faults.lock:
                plan = faults.planned.get(name)
                fault = plan.pop(0) if plan else None
                if fault:
                    faults.served.append((name, fault))
            if not fault:
                return original(self_)
            body = Path(self_.translate_path(self_.path)).read_bytes()
            half = body[: len(body) // 2]
            self_.send_response(200)
            if fault == "portal":
                self_.send_header("Content-Type", "text/html; charset=utf-8")
                self_.send_header("Content-Length", str(len(PORTAL)))
                self_.end_headers()
                self_.wfile.write(PORTAL)
                return None
            self_.send_header("Content-Type", self_.guess_type(self_.path.split("?")[0]))
            if fault == "truncated":
                self_.send_header("Content-Length", str(len(half)))
            self_.send_header("Connection", "close")
            self_.end_headers()
            self_.wfile.write(half)
            self_.close_connection = True
            return None

        handler.do_GET = do_GET

    def plan(self, name: str, *faults: str) -> None:
        with self.lock:
            self.planned[name] = list(faults)


@pytest.fixture
def faulty(built_site):
    from export.serve import serve_in_thread

    server, url = serve_in_thread(built_site, isolation=True)
    yield url, Faults(server)
    server.shutdown()
    server.server_close()


def digest_of(built_site: Path, path: str) -> str:
    return hashlib.sha256(built_file(built_site, path).read_bytes()).hexdigest()


def exercise_works(context, url: str) -> None:
    """A visit of the exercise page that starts Python and gives the right verdicts."""
    page = context.new_page()
    watch = PageWatch(page)
    page.set_default_timeout(180000)
    page.goto(url + "microgpt/")
    page.evaluate(WAIT_EXERCISE_JS)
    assert page.evaluate(CHECK_JS, SOLUTION)["passed"]
    assert not page.evaluate(CHECK_JS, STARTER)["passed"]
    watch.check()
    page.close()


def first_visit(context, url: str) -> None:
    """A first visit that meets the faults: whatever it shows, it ends (ready or a message)."""
    page = context.new_page()
    PageWatch(page, allow_console=FAULT_CONSOLE)
    page.set_default_timeout(180000)
    page.goto(url + "microgpt/")
    page.evaluate("""async () => {
      for (let i = 0; i < 800 && !window.mhaExercise; i++) await new Promise((r) => setTimeout(r, 25));
      try { await window.mhaExercise.ready; } catch { /* said on the page */ }
    }""")
    # The service worker controls the page and adopted (or refused) what the exercise's worker handed it.
    wait_until(
        page,
        "async () => navigator.serviceWorker.controller !== null && !(await caches.has('pyodide-handoff'))",
        timeout_ms=120000,
    )
    page.close()


@pytest.mark.parametrize(
    "name,fault",
    [
        ("pyodide.asm.wasm", "portal"),
        ("pyodide.asm.mjs", "truncated"),
        ("python_stdlib.zip", "truncated"),
        ("pyodide.asm.wasm", "cut"),
    ],
)
def test_a_file_broken_on_the_first_visit_is_not_kept(browser, faulty, built_site, name, fault):
    url, faults = faulty
    faults.plan(name, fault)
    context = browser.new_context(service_workers="allow")
    try:
        first_visit(context, url)
        assert (name, fault) in faults.served, faults.served
        good = digest_of(built_site, f"vendor/pyodide/{name}")
        # Whatever the cache holds of that file now is the good file.
        page = context.new_page()
        page.goto(url + "credits/")
        stored = page.evaluate(RUNTIME_CACHE_JS, name)
        page.close()
        assert all(d == good for d in stored.values()), stored
        exercise_works(context, url)
        page = context.new_page()
        page.goto(url + "credits/")
        wait_until(
            page,
            "async (name) => Object.keys(await (" + RUNTIME_CACHE_JS + ")(name)).length > 0",
            name,
            timeout_ms=60000,
        )
        stored = page.evaluate(RUNTIME_CACHE_JS, name)
        assert stored and all(d == good for d in stored.values()), stored
        page.close()
    finally:
        context.close()


TAMPER_JS = """async ([name, body, type]) => {
  const names = (await caches.keys()).filter((n) => n.startsWith('mha-runtime-'));
  let done = 0;
  for (const n of names) {
    const cache = await caches.open(n);
    for (const r of await cache.keys()) {
      if (!r.url.endsWith('/' + name)) continue;
      await cache.put(r, new Response(body, { headers: { 'Content-Type': type } }));
      done += 1;
    }
  }
  return done;
}"""


@pytest.mark.parametrize(
    "name,body,kind",
    [
        # Another page of this origin rewrote Pyodide's loader: Python must not start from it.
        ("pyodide.mjs", "export async function loadPyodide() { throw new Error('rewritten'); }", "text/javascript"),
        ("pyodide.asm.wasm", "not WebAssembly", "application/wasm"),
    ],
)
def test_a_rewritten_stored_file_is_not_used(browser, faulty, built_site, name, body, kind):
    url, _ = faulty
    context = browser.new_context(service_workers="allow")
    try:
        exercise_works(context, url)
        page = context.new_page()
        page.goto(url + "credits/")
        wait_until(
            page,
            "async (name) => Object.keys(await (" + RUNTIME_CACHE_JS + ")(name)).length > 0",
            name,
            timeout_ms=120000,
        )
        assert page.evaluate(TAMPER_JS, [name, body, kind]) >= 1
        page.close()
        exercise_works(context, url)
        page = context.new_page()
        page.goto(url + "credits/")
        good = digest_of(built_site, f"vendor/pyodide/{name}")
        wait_until(
            page,
            "async ([name, good]) => Object.values(await (" + RUNTIME_CACHE_JS + ")(name)).every((d) => d === good)",
            [name, good],
            timeout_ms=60000,
        )
        page.close()
    finally:
        context.close()


def test_other_query_strings_do_not_grow_the_runtime_cache(browser, faulty):
    url, _ = faulty
    context = browser.new_context(service_workers="allow")
    try:
        page = context.new_page()
        page.goto(url + "credits/")
        page.wait_for_function("() => navigator.serviceWorker.controller !== null")
        count = """async () => {
          let n = 0;
          for (const name of (await caches.keys()).filter((x) => x.startsWith('mha-runtime-')))
            n += (await (await caches.open(name)).keys()).length;
          return n;
        }"""
        before = page.evaluate(count)
        # What learner code in a Run can do: ask for a runtime file again and again under new queries.
        page.evaluate("""async () => {
          const root = new URL('../', location.href);
          const listing = await fetch(new URL('build.json', root)).then((r) => r.json());
          const folder = listing.folders['vendor/pyodide/'];
          for (let i = 0; i < 3; i++) await (await fetch(new URL(folder + 'python_stdlib.zip?copy=' + i, root))).arrayBuffer();
        }""")
        assert page.evaluate(count) == before
    finally:
        context.close()
