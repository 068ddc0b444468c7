"""A download that stalls says so, and a slow one shows its bytes arriving.

The line is made at the test server, which sees the page and the service worker alike:

* a stall: the answer's head and 88 % of the file are sent, then nothing (the
  connection stays open, as on a weak Wi-Fi). The page says, in words, which
  file stalled and at how many percent, with a Retry button (within 15 s of the
  last byte: waited for here, never slept); Retry asks for the file again and
  the page gets ready. Used to sit at "88 %" for good with no word.
* a slow line (the server paces onnxruntime's engine) on a visit the service worker
  serves: it reads each runtime file whole to check its digest before the page
  gets a byte, so the compare page's bar sat still, then jumped to the file's end;
  now the worker tells the page what has come, and the bar moves with the bytes.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from pathlib import Path

import pytest

from tests.browser_util import WAIT_READY_JS, PageWatch, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("require_models")]

ENGINE = "ort-wasm-simd-threaded.wasm"
STALLED_AT = 0.885  # of the file: the page should say 88 %
# A line of about 2 MB/s: seconds for onnxruntime's 14 MB engine.
PACE_CHUNK = 32 * 1024
PACE_S = 0.016
STATUS_LOG = """
  window.__statusLog = [];
  new MutationObserver(() => {
    const s = document.querySelector('.mha-compare__status');
    if (s) window.__statusLog.push({t: performance.now(), text: s.innerText});
  }).observe(document, {subtree: true, childList: true, characterData: true});
"""


class Line:
    """The site over a line the test shapes: stall(name) holds the next answer of that file after
    88 % of it; pace(*names) sends those files slowly. Counts every GET of each file name."""

    def __init__(self, site: Path):
        from export.serve import make_server, server_url

        self.lock = threading.Lock()
        self.stalls: set[str] = set()
        self.paced: set[str] = set()
        self.gets: dict[str, int] = {}
        self.release = threading.Event()
        self.server = make_server(site, port=0, quiet=True)
        plain = self.server.RequestHandlerClass
        line = self

        class Shaped(plain.func):
            def do_GET(self):  # noqa: N802
                name = self.path.split("?")[0].rsplit("/", 1)[-1]
                with line.lock:
                    line.gets[name] = line.gets.get(name, 0) + 1
                    stall = name in line.stalls
                    line.stalls.discard(name)
                    paced = name in line.paced
                if not (stall or paced):
                    return super().do_GET()
                body = Path(self.translate_path(self.path)).read_bytes()
                self.send_response(200)
                self.send_header("Content-Type", self.guess_type(self.path.split("?")[0]))
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if stall:
                    self.wfile.write(body[: int(len(body) * STALLED_AT)])
                    self.wfile.flush()
                    line.release.wait(300)  # then the connection closes, the file unfinished
                    self.close_connection = True
                    return None
                for at in range(0, len(body), PACE_CHUNK):
                    self.wfile.write(body[at : at + PACE_CHUNK])
                    self.wfile.flush()
                    time.sleep(PACE_S)  # the server's pace, not a wait of the test
                return None

        self.server.RequestHandlerClass = functools.partial(Shaped, *plain.args, **plain.keywords)
        self.url = server_url(self.server)
        threading.Thread(target=self.server.serve_forever, name="shaped-site", daemon=True).start()

    def stall(self, name: str) -> None:
        with self.lock:
            self.stalls.add(name)

    def pace(self, *names: str) -> None:
        with self.lock:
            self.paced.update(names)

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def line(built_site):
    shaped = Line(built_site)
    yield shaped
    shaped.close()


# A request the page cut short itself (the Retry aborts the stalled one).
ABORTED = (r"Failed to load resource", r"net::ERR_(ABORTED|FAILED)", r"aborted")


@pytest.mark.parametrize("name", ["four_heads.onnx", ENGINE])
def test_a_stalled_download_says_so_and_retry_finishes_it(browser, line, name):
    line.stall(name)
    context = browser.new_context(service_workers="block")
    try:
        page = context.new_page()
        watch = PageWatch(page, allow_console=ABORTED)
        page.set_default_timeout(120000)
        page.goto(line.url + "compare/?backend=wasm")
        notice = wait_until(
            page,
            """() => {
          const box = document.querySelector('.mha-stall');
          return box && box.innerText.includes('stalled') ? box.innerText : '';
        }""",
            timeout_ms=90000,
        )
        assert name in notice and "88 %" in notice and "check your connection" in notice, notice
        assert "no data for 15 s" in notice, notice
        assert not page.inner_text(".mha-compare__status").startswith("Ready")
        page.get_by_role("button", name="Retry").click()
        state = page.evaluate(WAIT_READY_JS)
        assert state["ok"], state
        assert "Ready" in page.inner_text(".mha-compare__status")
        page.wait_for_function("() => !document.querySelector('.mha-stall')")
        assert line.gets[name] == 2, line.gets
        watch.check()
    finally:
        context.close()


def test_progress_moves_while_the_service_worker_checks_the_files(browser, line):
    context = browser.new_context(service_workers="allow")
    try:
        page = context.new_page()
        watch = PageWatch(page)
        page.set_default_timeout(120000)
        # A first page installs the service worker, which then serves the compare page: the
        # engine is not stored yet, so the worker downloads and checks it before the page
        # gets a byte.
        page.goto(line.url + "credits/")
        page.wait_for_function("() => navigator.serviceWorker.controller !== null")
        line.pace(ENGINE)
        page.add_init_script(STATUS_LOG)
        page.goto(line.url + "compare/?backend=wasm")
        state = page.evaluate(WAIT_READY_JS)
        assert state["ok"], state
        assert page.evaluate("() => navigator.serviceWorker.controller !== null")
        shown = [
            (e["t"], int(m.group(1)))
            for e in page.evaluate("() => window.__statusLog")
            for m in [re.search(r"\((\d+)%\)", e["text"])]
            if m
        ]
        # The paced engine takes seconds to come. A bar that moves with its bytes passes 50 % long
        # before the end; one that waits for the worker's check jumps from the models' share
        # (~30 %) to 99 % in the moment the worker hands the checked file over.
        half = next(t for t, p in shown if p >= 50)
        end = next(t for t, p in shown if p >= 99)
        assert end - half >= 2000, shown
        assert line.gets[ENGINE] == 1, line.gets
        watch.check()
    finally:
        context.close()


def test_a_stalled_python_download_says_so_and_retry_starts_python(browser, line):
    """Pyodide's files, downloaded by the exercise's worker on a first visit, are watched the same way."""
    name = "pyodide.asm.wasm"
    line.stall(name)
    context = browser.new_context(service_workers="block")
    try:
        page = context.new_page()
        watch = PageWatch(page, allow_console=ABORTED)
        page.set_default_timeout(180000)
        page.goto(line.url + "microgpt/")
        notice = wait_until(
            page,
            """() => {
          const box = document.querySelector('.mha-stall');
          return box && box.innerText.includes('stalled') ? box.innerText : '';
        }""",
            timeout_ms=90000,
        )
        assert name in notice and "88 %" in notice and "check your connection" in notice, notice
        page.get_by_role("button", name="Retry").click()
        info = page.evaluate("async () => await window.mhaExercise.ready")
        assert info["python"], info
        page.wait_for_function("() => !document.querySelector('.mha-stall')")
        assert line.gets[name] == 2, line.gets
        watch.check()
    finally:
        context.close()
