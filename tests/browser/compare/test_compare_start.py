"""How the compare page starts (issue 22, point 4): its widget's modules are
preloaded by the page itself, each fetched once, and onnxruntime's bundle and
its engine's JavaScript are asked for side by side."""
from __future__ import annotations

import posixpath
import re
import sys
from pathlib import Path

import pytest

from tests.browser_util import open_compare

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("require_models")]
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "site_src" / "hooks"))
import module_preload  # noqa: E402  (the hook that writes the links)

RESOURCES_JS = """() => performance.getEntriesByType('resource').map((e) => ({
  path: new URL(e.name).pathname, start: e.startTime, end: e.responseEnd, initiator: e.initiatorType }))"""


def test_compare_page_preloads_every_module_of_its_widget(built_site: Path):
    html = (built_site / "compare" / "index.html").read_text()
    head = html.split("</head>", 1)[0]
    preloaded = re.findall(r'<link rel="modulepreload" href="\.\./js/([^"]+)">', head)
    wanted = module_preload.import_closure(module_preload.widget_modules()["compare"])
    assert "compare/compare.js" in wanted and "runtime/ort.js" in wanted
    assert sorted(preloaded) == sorted(wanted)
    for module in preloaded:
        assert (built_site / "js" / module).is_file(), module


def test_import_closure_follows_every_static_import(built_site: Path):
    """Every relative import in the widget's modules is in the closure (the link list misses none)."""
    closure = set(module_preload.import_closure("compare/compare.js"))
    for module in closure:
        source = (built_site / "js" / module).read_text()
        for target in re.findall(r'\bfrom\s*"(\.{1,2}/[^"]+\.js)"', source):
            assert posixpath.normpath(posixpath.join(posixpath.dirname(module), target)) in closure, (module, target)


def test_each_module_fetched_once_and_the_engine_alongside_the_bundle(make_page, base_url):
    page, watch = make_page()
    open_compare(page, base_url, "?backend=wasm")
    entries = page.evaluate(RESOURCES_JS)
    modules = [e["path"] for e in entries if "/js/" in e["path"] and e["path"].endswith(".js")]
    # A preload that the page's import() could not use (another URL or
    # credentials mode) would show as a second request for the same module.
    assert len(modules) == len(set(modules)), sorted(m for m in modules if modules.count(m) > 1)
    for name in ("compare/compare.js", "compare/models.js", "runtime/ort.js", "runtime/sha256.js"):
        (entry,) = [e for e in entries if e["path"].endswith("/js/" + name)]
        assert entry["initiator"] == "link", (name, entry)  # fetched for the page's own <link rel="modulepreload">
    bundle = [e for e in entries if e["path"].endswith("/ort.wasm.min.mjs")]
    glue = [e for e in entries if e["path"].endswith("/ort-wasm-simd-threaded.mjs")]
    assert len(bundle) == 1 and len(glue) == 1
    # The engine's JavaScript is asked for before the bundle has arrived, not after.
    assert glue[0]["start"] < bundle[0]["end"], (bundle, glue)
    watch.check()
