"""The built site served as export.serve serves it, with an error recorder in every page.

WebKitWebDriver reports no console and no uncaught exception, so each HTML page is
sent with a small script first in its head that records them itself (in every
engine alike): uncaught exceptions, unhandled promise rejections and console.error
calls, appended to sessionStorage (``mha-test-errors``), where they outlive the page
that raised them; tests/engines/drivers.py reads them. The service worker stores the
pages as served, so pages opened offline carry the recorder too.

Each test that needs a fresh browser state gets a server of its own: a new port is a
new origin, with no service worker, cache or storage of an earlier test, even in a
browser shared by the whole session. ``offline()`` closes it: the browser then meets
refused connections, as on a lost line, and only the service worker can answer.
"""

from __future__ import annotations

import functools
import os
import threading
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from urllib.parse import urlsplit

from export.serve import make_server, server_url

RECORDER = b"""<script>(() => {
  const KEY = "mha-test-errors";
  const keep = (kind, text) => {
    try {
      const all = JSON.parse(sessionStorage.getItem(KEY) || "[]");
      all.push(`${kind}: ${text} (${location.pathname})`);
      sessionStorage.setItem(KEY, JSON.stringify(all));
    } catch (err) { /* storage full or off: the engine's own report remains */ }
  };
  // The message and where it came from (WebKit's and Firefox's stacks leave the message out).
  const text = (x) => {
    if (!x || typeof x !== "object") return String(x);
    const message = String(x.message || ""), stack = String(x.stack || "");
    return stack.includes(message) ? stack || String(x) : `${message} ${stack}`.trim();
  };
  addEventListener("error", (e) => keep("uncaught", e.error !== undefined ? text(e.error) : e.message));
  addEventListener("unhandledrejection", (e) => keep("unhandled rejection", text(e.reason)));
  const original = console.error;
  console.error = function (...args) {
    keep("console.error", args.map(text).join(" "));
    return original.apply(this, args);
  };
})();</script>"""


def _handler_with_recorder(base, head: bytes):
    class Watched(base):
        def do_GET(self):  # noqa: N802
            if not self._strip_prefix():
                return
            path = self.translate_path(self.path)
            if os.path.isdir(path) and urlsplit(self.path).path.endswith("/"):
                path = os.path.join(path, "index.html")
            if not path.endswith(".html") or not os.path.isfile(path):
                if not self._send_gzipped():
                    SimpleHTTPRequestHandler.do_GET(self)  # the prefix is already stripped
                return
            body = Path(path).read_bytes().replace(b"<head>", b"<head>" + RECORDER + head, 1)
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Watched


class WatchedServer:
    def __init__(self, site: Path, *, isolation: bool = True, prefix: str = "/", head: str = ""):
        """`head`: more HTML put first in every page's head, after the recorder (a test's own script)."""
        self.server = make_server(site, port=0, isolation=isolation, prefix=prefix, quiet=True)
        plain = self.server.RequestHandlerClass  # functools.partial(handler class, directory=site)
        self.server.RequestHandlerClass = functools.partial(
            _handler_with_recorder(plain.func, head.encode()), *plain.args, **plain.keywords
        )
        self.url = server_url(self.server, prefix)
        self.thread = threading.Thread(target=self.server.serve_forever, name="watched-site", daemon=True)
        self.thread.start()
        self.closed = False

    def offline(self) -> None:
        """Stop answering: every new connection is refused from now on."""
        if not self.closed:
            self.closed = True
            self.server.shutdown()
            self.server.server_close()

    close = offline
