"""Helpers for driving the site in Debian's headless Chromium (tests and bench)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--enable-unsafe-webgpu",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
LOCAL_HOSTS = {"127.0.0.1"}
# Every widget of the page drawn, or saying in words why not: none empty, none still on its
# no-script text or on a "Loading" status.
WIDGETS_DRAWN = """() => document.readyState === "complete" && document.querySelector("h1")
  && [...document.querySelectorAll('[data-mha-widget]')].every((root) => root.childElementCount > 0
       && !root.querySelector('.mha-noscript')
       && ![...root.querySelectorAll('[role=status]')].some((n) => /^Loading/.test(n.textContent.trim())))"""


def filter_errors(found: list[str], allow) -> list[str]:
    """The errors of `found` that match no pattern of `allow` (regular expressions, searched)."""
    return [e for e in found if not any(re.search(p, e) for p in allow)]


class PageWatch:
    """Collects console errors, uncaught exceptions and requests to other origins.

    Requests that leave 127.0.0.1 are aborted (and recorded). ``check()`` raises
    AssertionError listing anything unexpected; console errors matching a
    pattern in ``allow_console`` are tolerated.
    """

    def __init__(self, page, allow_console: tuple[str, ...] = ()):
        self.page = page
        self.allow = [re.compile(p) for p in allow_console]
        self.console_errors: list[str] = []
        self.page_errors: list[str] = []
        self.foreign_requests: list[str] = []
        self.requests: list[str] = []
        page.on("console", self._on_console)
        page.on("pageerror", lambda exc: self.page_errors.append(str(exc)))
        page.on("request", lambda req: self.requests.append(req.url))
        page.route("**/*", self._route)

    def _on_console(self, msg) -> None:
        if msg.type == "error":
            self.console_errors += filter_errors([msg.text], self.allow)

    def _route(self, route) -> None:
        url = route.request.url
        parts = urlsplit(url)
        if parts.scheme in ("data", "blob", "about") or parts.hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            self.foreign_requests.append(url)
            route.abort()

    def check(self) -> None:
        problems = []
        if self.foreign_requests:
            problems.append(f"requests to other origins: {self.foreign_requests}")
        if self.page_errors:
            problems.append(f"uncaught exceptions: {self.page_errors}")
        if self.console_errors:
            problems.append(f"console errors: {self.console_errors}")
        assert not problems, "; ".join(problems)


WAIT_READY_JS = """async () => {
  for (let i = 0; i < 600 && !window.mhaCompare; i++) await new Promise((r) => setTimeout(r, 25));
  if (!window.mhaCompare) throw new Error("window.mhaCompare never appeared");
  return await window.mhaCompare.ready;
}"""


def wait_ready(page, attempts: int = 3) -> dict:
    """The compare page's ready state, even if a history step reloads the document meanwhile."""
    for attempt in range(attempts):
        try:
            return page.evaluate(WAIT_READY_JS)
        except Exception as exc:  # playwright.Error: the document was replaced under the call
            if "Execution context was destroyed" not in str(exc) or attempt == attempts - 1:
                raise
            page.wait_for_load_state()


def open_compare(page, base_url: str, query: str = "", timeout_ms: int = 60000) -> dict:
    """Open the compare page, wait for the models and return the ready state."""
    page.set_default_timeout(timeout_ms)
    page.goto(base_url + "compare/" + query)
    return page.evaluate(WAIT_READY_JS)


# Playwright's wait_for_function calls its function once per poll and takes any
# truthy value as done: a promise (what an async condition returns) is truthy
# at once, so it would not wait at all. An async condition is polled here,
# inside the page, until it holds or the deadline passes.
_POLL_JS = """async ([condition, arg, timeoutMs, intervalMs]) => {
  const holds = (0, eval)(condition);
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await holds(arg);
    if (value || performance.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}"""


def wait_until(page, condition: str, arg=None, timeout_ms: int = 60000, interval_ms: int = 200):
    """Wait until the async JavaScript function `condition(arg)` resolves truthy in the page; return its value."""
    value = page.evaluate(_POLL_JS, [condition, arg, timeout_ms, interval_ms])
    assert value, f"not true within {timeout_ms / 1000:g} s: {condition}"
    return value
