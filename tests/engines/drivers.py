"""One small interface over three browser engines, for the tests that run in every engine.

* Chromium: Debian's ``chromium`` through Playwright (as in tests/conftest.py).
* Firefox: Debian's ``firefox-esr`` through ``puppeteer-core`` over WebDriver BiDi
  (tests/engines/firefox_bridge.mjs, a Node process fed JSON lines).
* WebKit: Debian's WebKitGTK (``webkit2gtk-driver``'s ``WebKitWebDriver`` and its
  MiniBrowser) through Selenium, under ``xvfb-run``: WebKitGTK has no headless mode.
  The driver's path is given, so Selenium Manager never runs and nothing is downloaded.

An engine opens tabs (``open(width, height)``); a tab goes to a URL, evaluates a
JavaScript function (async or not, its value JSON) and reports the errors it saw.
WebKitWebDriver offers no log and no preload script, so every engine also reads the
errors the page recorded itself (tests/engines/watched_server.py puts a recorder
into every page's head): uncaught exceptions, unhandled rejections and console.error
calls, kept in sessionStorage so those raised while a page is being left are read
on the next page of the same origin.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from tests.browser_util import CHROMIUM, CHROMIUM_ARGS, filter_errors

ROOT = Path(__file__).resolve().parents[2]
FIREFOX = "/usr/bin/firefox-esr"
WEBKIT_DRIVER = "/usr/bin/WebKitWebDriver"
XVFB_RUN = "/usr/bin/xvfb-run"
ENGINES = ("chromium", "firefox", "webkit")
# Where each engine comes from, for the message when it is missing (`make test` installs them).
PACKAGES = {"chromium": "chromium", "firefox": "firefox-esr", "webkit": "webkit2gtk-driver xvfb"}

# What each engine reports of a file that could not be fetched (the server gone, and the
# service worker without a copy): the engine's report of a network failure, not page code
# failing. Firefox words it as an error of the page; the page itself says what is missing.
NETWORK_FAILURES = (
    r"Failed to load resource",  # Chromium
    r"net::ERR_(INTERNET_DISCONNECTED|CONNECTION_REFUSED|FAILED)",  # Chromium
    r"Failed to load ‘[^’]*’\. A ServiceWorker (passed a promise to FetchEvent\.respondWith\(\) that rejected"
    r"|intercepted the request and encountered an unexpected error)",  # Firefox
    r"The I/O read operation failed\.",  # WebKit: a request cut short
    # The theme's own request (search index, sitemap) cut short by a page being left: Material's
    # XMLHttpRequest wrapper turns it into an uncaught Error("Network error") (seen in WebKit offline).
    r"Network error[\s\S]*assets/javascripts/bundle\.[0-9a-f]+\.min\.js",
)

TIMEOUT_S = 240  # a loaded 2-core machine starts WebKit's first Python slowly

# Reads and empties what the page's recorder kept (watched_server.RECORDER).
_RECORDED_JS = """() => {
  let found = [];
  try {
    found = JSON.parse(sessionStorage.getItem("mha-test-errors") || "[]");
    sessionStorage.removeItem("mha-test-errors");
  } catch (err) { /* about:blank has no storage */ }
  return found;
}"""


class EngineMissing(RuntimeError):
    pass


def webkit_browser() -> str | None:
    """MiniBrowser, the small browser WebKitWebDriver drives (shipped with libwebkit2gtk)."""
    for lib in sorted(Path("/usr/lib").glob("*/webkit2gtk-4.*/MiniBrowser")):
        return str(lib)
    return None


class Tab:
    engine: "Engine"

    def goto(self, url: str) -> None:
        raise NotImplementedError

    def reload(self) -> None:
        raise NotImplementedError

    def evaluate(self, source: str, arg=None):
        raise NotImplementedError

    def _native_errors(self) -> list[str]:
        return []

    def errors(self, allow: tuple[str, ...] = ()) -> list[str]:
        """Errors since the last call: the engine's own reports and the page's records, less
        those matching a pattern of `allow`."""
        recorded = []
        try:
            recorded = self.evaluate(_RECORDED_JS) or []
        except Exception as exc:  # noqa: BLE001 (a page that cannot be read is itself a finding)
            recorded = [f"could not read the page's error record: {exc}"]
        return filter_errors(self._native_errors() + recorded, allow)

    def wait_until(self, condition: str, arg=None, timeout_s: float = 60, interval_ms: int = 200):
        """Poll the async JavaScript function `condition(arg)` inside the page until it is truthy."""
        source = """async ([condition, arg, timeoutMs, intervalMs]) => {
          const holds = (0, eval)(condition);
          const deadline = performance.now() + timeoutMs;
          for (;;) {
            const value = await holds(arg);
            if (value || performance.now() > deadline) return value;
            await new Promise((r) => setTimeout(r, intervalMs));
          }
        }"""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                left_ms = max(0.0, deadline - time.monotonic()) * 1000  # a wait resumed keeps one budget
                value = self.evaluate(source, [condition, arg, left_ms, interval_ms])
                break
            except Exception as err:
                # WebKitWebDriver drops a waiting script when its page unloads ("Callback was not
                # called before the unload event"): the wait goes on in the page that replaced it.
                if "unload" not in str(err) or time.monotonic() > deadline:
                    raise
        assert value, f"{self.engine.name}: not true within {timeout_s:g} s: {condition}"
        return value

    def close(self) -> None:
        pass


class Engine:
    name = ""
    version = ""

    def open(self, width: int = 1280, height: int = 900) -> Tab:
        raise NotImplementedError

    def quit(self) -> None:
        pass


# -- Chromium ---------------------------------------------------------------------------------------


class ChromiumTab(Tab):
    def __init__(self, engine, context):
        self.engine = engine
        self.context = context
        self.page = context.new_page()
        self.page.set_default_timeout(TIMEOUT_S * 1000)
        self._errors: list[str] = []
        self.page.on("pageerror", lambda exc: self._errors.append(f"uncaught: {exc}"))
        self.page.on(
            "console",
            lambda m: (
                self._errors.append(f"console error: {m.text} ({m.location.get('url', '')})")
                if m.type == "error"
                else None
            ),
        )

    def goto(self, url):
        self.page.goto(url)

    def reload(self):
        self.page.reload()

    def evaluate(self, source, arg=None):
        return self.page.evaluate(source, arg)

    def _native_errors(self):
        found, self._errors = self._errors, []
        return found

    def close(self):
        self.context.close()


class ChromiumEngine(Engine):
    name = "chromium"

    def __init__(self, browser=None):
        if not Path(CHROMIUM).exists():
            raise EngineMissing(CHROMIUM)
        self._pw = None
        if browser is None:  # alone; inside pytest the session's one Playwright browser is passed in, since
            # a second sync_playwright() in the same process fails while the first is running
            from playwright.sync_api import sync_playwright

            self._pw = sync_playwright().start()
            browser = self._pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        self.browser = browser
        self.version = self.browser.version

    def open(self, width=1280, height=900):
        # Service workers on: the cross-engine set tests offline use.
        return ChromiumTab(
            self, self.browser.new_context(viewport={"width": width, "height": height}, service_workers="allow")
        )

    def quit(self):
        if self._pw:  # a browser passed in belongs to whoever passed it
            self.browser.close()
            self._pw.stop()


# -- Firefox ----------------------------------------------------------------------------------------


class FirefoxTab(Tab):
    def __init__(self, engine, tab_id):
        self.engine = engine
        self.id = tab_id

    def goto(self, url):
        self.engine.call("goto", tab=self.id, url=url, timeout=TIMEOUT_S * 1000)

    def reload(self):
        self.engine.call("reload", tab=self.id, timeout=TIMEOUT_S * 1000)

    def evaluate(self, source, arg=None):
        return self.engine.call("evaluate", tab=self.id, source=source, arg=arg)

    def _native_errors(self):
        return self.engine.call("errors", tab=self.id)

    def close(self):
        self.engine.call("close", tab=self.id)


class FirefoxEngine(Engine):
    name = "firefox"

    def __init__(self):
        if not Path(FIREFOX).exists():
            raise EngineMissing(FIREFOX)
        bridge = ROOT / "tests" / "engines" / "firefox_bridge.mjs"
        if not (ROOT / "node_modules" / "puppeteer-core").is_dir():
            raise EngineMissing("node_modules/puppeteer-core (run npm ci)")
        self.proc = subprocess.Popen(
            ["node", str(bridge)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "FIREFOX": FIREFOX},
        )
        self._next = 0
        self.version = self.call("version")

    def call(self, cmd, **args):
        self._next += 1
        self.proc.stdin.write(json.dumps({"id": self._next, "cmd": cmd, **args}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the Firefox bridge ended (exit {self.proc.poll()}) during {cmd}")
        reply = json.loads(line)
        if not reply["ok"]:
            raise RuntimeError(f"firefox {cmd}: {reply['error']}")
        return reply["value"]

    def open(self, width=1280, height=900):
        return FirefoxTab(self, self.call("open", width=width, height=height))

    def quit(self):
        try:
            self.proc.stdin.write(json.dumps({"id": 0, "cmd": "quit"}) + "\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()


# -- WebKit -----------------------------------------------------------------------------------------

_ASYNC_WRAPPER = """const done = arguments[arguments.length - 1];
Promise.resolve().then(() => (%s)(arguments[0]))
  .then((value) => done({ ok: true, value: value === undefined ? null : value }),
        (err) => done({ ok: false, error: String((err && (err.stack || err.message)) || err) }));"""


class WebKitTab(Tab):
    def __init__(self, engine, width, height):
        self.engine = engine
        driver = engine.driver
        driver.get("about:blank")
        # The window's size includes no chrome in MiniBrowser's automation mode; set it, then
        # correct by what the page reports, so the layout width is the one asked for.
        driver.set_window_size(width, height)
        inner = driver.execute_script("return [innerWidth, innerHeight]")
        if inner != [width, height]:
            driver.set_window_size(2 * width - inner[0], 2 * height - inner[1])

    def goto(self, url):
        self.engine.driver.get(url)

    def reload(self):
        self.engine.driver.refresh()

    def evaluate(self, source, arg=None):
        reply = self.engine.driver.execute_async_script(_ASYNC_WRAPPER % source, arg)
        if not reply["ok"]:
            raise RuntimeError(f"webkit evaluate: {reply['error']}")
        return reply["value"]

    def close(self):
        # One window for the session: leave the page, so nothing of it keeps running.
        self.engine.driver.get("about:blank")


class WebKitEngine(Engine):
    name = "webkit"

    def __init__(self):
        browser = webkit_browser()
        for needed in (WEBKIT_DRIVER, XVFB_RUN, browser):
            if not needed or not Path(needed).exists():
                raise EngineMissing(needed or "MiniBrowser (libwebkit2gtk)")
        from selenium import webdriver
        from selenium.webdriver.webkitgtk.options import Options
        from selenium.webdriver.webkitgtk.service import Service

        self._xvfb = None
        if not os.environ.get("DISPLAY"):
            self._xvfb = _Xvfb()
        options = Options()
        options.binary_location = browser
        options.add_argument("--automation")
        env = {**os.environ, "DISPLAY": self._xvfb.display if self._xvfb else os.environ["DISPLAY"]}
        service = Service(executable_path=WEBKIT_DRIVER, env=env)
        self.driver = webdriver.WebKitGTK(options=options, service=service)
        self.driver.set_script_timeout(TIMEOUT_S)
        self.driver.set_page_load_timeout(TIMEOUT_S)
        self.version = self.driver.capabilities.get("browserVersion", "")

    def open(self, width=1280, height=900):
        return WebKitTab(self, width, height)

    def quit(self):
        try:
            self.driver.quit()
        finally:
            if self._xvfb:
                self._xvfb.stop()


class _Xvfb:
    """A virtual display for the session, the way xvfb-run starts one (its -a picks a free number)."""

    def __init__(self):
        if not shutil.which("Xvfb"):
            raise EngineMissing("Xvfb (apt-get install xvfb)")
        read, write = os.pipe()
        # -displayfd: the server writes the display number it chose once it accepts connections.
        self.proc = subprocess.Popen(
            ["Xvfb", "-displayfd", str(write), "-screen", "0", "1920x1080x24", "-nolisten", "tcp"],
            pass_fds=(write,),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(write)
        with os.fdopen(read) as f:
            number = f.readline().strip()
        if not number:
            self.proc.kill()
            raise RuntimeError("Xvfb did not start")
        self.display = f":{number}"

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def start(name: str) -> Engine:
    return {"chromium": ChromiumEngine, "firefox": FirefoxEngine, "webkit": WebKitEngine}[name]()
