"""Serve the built site locally: ``python -m export.serve --dir site``.

A small threaded static server on top of :mod:`http.server`. Compared with
``python -m http.server`` it

* sends ``Cross-Origin-Opener-Policy`` / ``Cross-Origin-Embedder-Policy`` so
  the page is cross-origin isolated and onnxruntime-web may use several WASM
  threads (``--no-isolation`` leaves them out: the site still works, on one
  thread);
* gives ``.mjs``, ``.wasm``, ``.onnx`` and ``.json`` their proper MIME types
  (``application/wasm`` lets the browser compile WebAssembly while it streams);
* can mount the site under a sub-path (``--prefix /some/lesson/``), the way a
  project page on a shared host would see it;
* tells the browser to revalidate every file, so a rebuilt site is picked up;
* can compress text, JSON, SVG and WebAssembly with gzip (``--gzip``), the way
  static hosts serve them, for measuring what a learner downloads;
* says when the build was made for another URL (``SITE_URL``): Material's
  instant navigation is then off and every click loads a whole page.
"""

from __future__ import annotations

import argparse
import email.utils
import functools
import gzip
import os
import re
import posixpath
import sys
import threading
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

MIME_TYPES = {
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".wasm": "application/wasm",
    ".onnx": "application/octet-stream",
    ".json": "application/json",
    ".map": "application/json",
    ".css": "text/css",
    ".svg": "image/svg+xml",
    ".zip": "application/zip",
    ".py": "text/x-python",
    ".txt": "text/plain; charset=utf-8",
    ".html": "text/html; charset=utf-8",
}


# Types a static host typically compresses (GitHub Pages, Netlify, nginx's gzip_types).
GZIP_TYPES = (
    "text/",
    "application/json",
    "application/wasm",
    "image/svg+xml",
    "application/xml",
)


def normalise_prefix(prefix: str) -> str:
    """``some/lesson`` -> ``/some/lesson/``; ``""`` and ``/`` -> ``/``."""
    parts = [p for p in prefix.split("/") if p]
    return "/" + "".join(p + "/" for p in parts)


class SiteHandler(SimpleHTTPRequestHandler):
    """Static files with isolation headers, exact MIME types and an optional prefix."""

    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES}
    isolation = True
    prefix = "/"
    quiet = False
    compress = False
    _gzipped: dict = {}  # (path, mtime_ns) -> compressed bytes, shared by the server's threads

    def end_headers(self) -> None:
        if self.isolation:
            self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
            self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def _strip_prefix(self) -> bool:
        """Map ``/prefix/x`` to ``/x``; redirect ``/prefix`` and ``/``; False if outside the prefix."""
        if self.prefix == "/":
            return True
        path = urlsplit(self.path).path
        if path in ("/", self.prefix.rstrip("/")):
            self.send_response(HTTPStatus.MOVED_PERMANENTLY)
            self.send_header("Location", self.prefix)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return False
        if not path.startswith(self.prefix):
            self.send_error(
                HTTPStatus.NOT_FOUND, f"this server only serves {self.prefix}"
            )
            return False
        self.path = "/" + self.path[len(self.prefix) :]
        return True

    def do_GET(self) -> None:  # noqa: N802 (http.server naming)
        if self._strip_prefix() and not self._send_gzipped():
            super().do_GET()

    def _send_gzipped(self) -> bool:
        """Answer with a gzip-compressed body when asked for and worth it; False to fall back."""
        if not self.compress or "gzip" not in self.headers.get("Accept-Encoding", ""):
            return False
        path = self.translate_path(self.path)
        if os.path.isdir(path):
            if not urlsplit(self.path).path.endswith("/"):
                return False  # let http.server redirect to the slash form
            path = os.path.join(path, "index.html")
        ctype = self.guess_type(path)
        if not os.path.isfile(path) or not ctype.startswith(GZIP_TYPES):
            return False
        stat = os.stat(path)
        since = self.headers.get("If-Modified-Since")
        if since:
            try:
                unchanged = (
                    int(stat.st_mtime)
                    <= email.utils.parsedate_to_datetime(since).timestamp()
                )
            except (TypeError, ValueError, IndexError, OverflowError):
                unchanged = False
            if unchanged:  # a revalidation, as with an uncompressed file
                self.send_response(HTTPStatus.NOT_MODIFIED)
                self.end_headers()
                return True
        key = (path, stat.st_mtime_ns)
        body = self._gzipped.get(key)
        if body is None:
            with open(path, "rb") as f:
                body = gzip.compress(f.read(), compresslevel=6, mtime=0)
            self._gzipped[key] = body
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(body)))
        self.send_header(
            "Last-Modified", email.utils.formatdate(stat.st_mtime, usegmt=True)
        )
        self.end_headers()
        self.wfile.write(body)
        return True

    def do_HEAD(self) -> None:  # noqa: N802
        if self._strip_prefix():
            super().do_HEAD()

    # exact types for our extensions, whatever the OS registry says
    def guess_type(self, path):
        ext = posixpath.splitext(str(path))[1].lower()
        return MIME_TYPES.get(ext) or super().guess_type(path)

    def log_message(self, format, *args) -> None:  # noqa: A002
        if not self.quiet:
            super().log_message(format, *args)


def make_server(
    directory: str | Path,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    isolation: bool = True,
    prefix: str = "/",
    quiet: bool = False,
    compress: bool = False,
) -> ThreadingHTTPServer:
    """A ready (not yet serving) server; ``port=0`` picks a free port."""
    directory = Path(directory)
    if not (directory / "index.html").is_file():
        raise FileNotFoundError(
            f"{directory} has no index.html; build the site first (make build)"
        )
    handler_cls = type(
        "BoundSiteHandler",
        (SiteHandler,),
        {
            "isolation": isolation,
            "prefix": normalise_prefix(prefix),
            "quiet": quiet,
            "compress": compress,
            "_gzipped": {},
        },
    )
    handler = functools.partial(handler_cls, directory=str(directory))
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server


def server_url(server: ThreadingHTTPServer, prefix: str = "/") -> str:
    host, port = server.server_address[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{normalise_prefix(prefix)}"


def built_for(directory: str | Path) -> str | None:
    """The URL the build was made for (its home page's canonical link), or None."""
    index = Path(directory) / "index.html"
    match = re.search(
        r'<link rel="canonical" href="([^"]+)"',
        index.read_text(encoding="utf-8", errors="replace"),
    )
    return match.group(1) if match else None


def serve_in_thread(directory: str | Path, **kwargs) -> tuple[ThreadingHTTPServer, str]:
    """Start a server on a background thread (for tests and benchmarks); returns it and its URL."""
    kwargs.setdefault("port", 0)
    kwargs.setdefault("quiet", True)
    server = make_server(directory, **kwargs)
    threading.Thread(
        target=server.serve_forever, name="site-server", daemon=True
    ).start()
    return server, server_url(server, kwargs.get("prefix", "/"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m export.serve", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--dir", default="site", help="the built site (default: site)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    parser.add_argument(
        "--prefix",
        default="/",
        help="serve the site under this path, e.g. /some/lesson/",
    )
    parser.add_argument(
        "--no-isolation",
        action="store_true",
        help="leave out the COOP/COEP headers (the models then run on one WASM thread)",
    )
    parser.add_argument("--quiet", action="store_true", help="do not log each request")
    parser.add_argument(
        "--gzip",
        action="store_true",
        help="compress text, JSON, SVG and WebAssembly as static hosts do",
    )
    args = parser.parse_args(argv)
    try:
        server = make_server(
            args.dir,
            args.host,
            args.port,
            isolation=not args.no_isolation,
            prefix=args.prefix,
            quiet=args.quiet,
            compress=args.gzip,
        )
    except (FileNotFoundError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    url = server_url(server, args.prefix)
    mode = (
        "cross-origin isolated"
        if not args.no_isolation
        else "not isolated (one WASM thread)"
    )
    print(
        f"Serving {Path(args.dir).resolve()} at {url}  ({mode}; Ctrl+C stops)",
        flush=True,
    )
    target = built_for(args.dir)
    if target != url:
        made_for = f"for {target}" if target else "without a URL (SITE_URL)"
        print(
            f"note: this build was made {made_for}, so pages load whole instead of by instant "
            f"navigation; `make serve` builds for the URL it serves.",
            flush=True,
        )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
