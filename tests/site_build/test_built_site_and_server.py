"""The built site and the static server, without a browser."""

from __future__ import annotations

import importlib.util
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from export.serve import normalise_prefix
from tests.site_paths import built_file, url_path

ROOT = Path(__file__).resolve().parents[2]
ORT_FILES = {
    "ort.wasm.min.mjs",
    "ort-wasm-simd-threaded.mjs",
    "ort-wasm-simd-threaded.wasm",
    "ort.webgpu.min.mjs",
    "ort-wasm-simd-threaded.asyncify.mjs",
    "ort-wasm-simd-threaded.asyncify.wasm",
}
PYODIDE_FILES = {"pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"}


def _get(url: str):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers, err.read()


def test_build_contains_pages_runtime_and_assets(built_site: Path, assets_dir: Path):
    for page in (
        "index.html",
        "compare/index.html",
        "js/main.js",
        "js/compare/compare.js",
        "js/runtime/ort.js",
        "js/runtime/tokenizer.js",
        "js/runtime/generate.js",
        "js/runtime/rng.js",
        "css/site.css",
    ):
        assert (built_site / page).is_file(), page
    assert {p.name for p in built_file(built_site, "vendor/ort/").iterdir()} == ORT_FILES
    assert {p.name for p in built_file(built_site, "vendor/pyodide/").iterdir()} == PYODIDE_FILES
    if assets_dir.is_dir():
        for path in assets_dir.rglob("*"):
            if path.is_file():
                rel = path.relative_to(assets_dir)
                assert (built_site / "wasm_assets" / rel).read_bytes() == path.read_bytes(), rel


def test_each_ort_entry_loads_the_pair_we_ship():
    dist = ROOT / "node_modules/onnxruntime-web/dist"
    wasm_entry = (dist / "ort.wasm.min.mjs").read_text()
    gpu_entry = (dist / "ort.webgpu.min.mjs").read_text()
    assert set(re.findall(r"ort-wasm-simd-threaded[a-z.]*\.mjs", wasm_entry)) == {"ort-wasm-simd-threaded.mjs"}
    assert set(re.findall(r"ort-wasm-simd-threaded[a-z.]*\.mjs", gpu_entry)) == {"ort-wasm-simd-threaded.asyncify.mjs"}
    assert "ort-wasm-simd-threaded.asyncify.wasm" in (dist / "ort-wasm-simd-threaded.asyncify.mjs").read_text()


def test_pages_load_nothing_from_other_origins(built_site: Path):
    """Scripts, styles, images and icons are all local (links to read elsewhere are fine)."""
    for html in built_site.rglob("*.html"):
        text = html.read_text()
        loaded = re.findall(r'<(?:script|img|source|iframe)\b[^>]*\bsrc="([^"]+)"', text)
        loaded += [
            href
            for tag, href in re.findall(r'(<link\b[^>]*\bhref="([^"]+)"[^>]*>)', text)
            if 'rel="canonical"' not in tag
        ]
        foreign = [u for u in loaded if u.startswith(("http://", "https://", "//"))]
        assert not foreign, (html, foreign)
    assert 'data-mha-widget="compare"' in (built_site / "compare/index.html").read_text()


def test_server_headers_and_mime_types(servers, built_site):
    url = servers["isolated"]
    status, headers, _ = _get(url)
    assert status == 200
    assert headers["Cross-Origin-Opener-Policy"] == "same-origin"
    assert headers["Cross-Origin-Embedder-Policy"] == "require-corp"
    for path, mime in (
        ("vendor/ort/ort.wasm.min.mjs", "text/javascript"),
        ("vendor/ort/ort-wasm-simd-threaded.wasm", "application/wasm"),
        ("js/main.js", "text/javascript"),
        ("vendor/pyodide/pyodide-lock.json", "application/json"),
    ):
        status, headers, _ = _get(url + url_path(built_site, path))
        assert status == 200 and headers["Content-Type"] == mime, (path, headers.get("Content-Type"))
    status, headers, _ = _get(servers["plain"])
    assert status == 200 and "Cross-Origin-Embedder-Policy" not in headers


def test_server_onnx_mime(servers, require_models):
    status, headers, body = _get(servers["isolated"] + "wasm_assets/models/four_heads.onnx")
    assert status == 200 and headers["Content-Type"] == "application/octet-stream" and len(body) > 1000


def test_server_sub_path(servers):
    url = servers["subpath"]
    assert url.endswith("/some/lesson/")
    status, _, body = _get(url)
    assert status == 200 and b"<html" in body.lower()
    status, _, _ = _get(url + "compare/")
    assert status == 200
    root = url[: -len("some/lesson/")]
    status, _, _ = _get(root + "compare/")
    assert status == 404
    # the bare prefix and / redirect into the site
    request = urllib.request.Request(root, method="GET")
    opener = urllib.request.build_opener(
        type("NoRedirect", (urllib.request.HTTPRedirectHandler,), {"redirect_request": lambda *a, **k: None})
    )
    with pytest.raises(urllib.error.HTTPError) as info:
        opener.open(request, timeout=10)
    assert info.value.code == 301 and info.value.headers["Location"] == "/some/lesson/"


def test_normalise_prefix():
    assert normalise_prefix("") == "/"
    assert normalise_prefix("/") == "/"
    assert normalise_prefix("some/lesson") == "/some/lesson/"
    assert normalise_prefix("/some//lesson/") == "/some/lesson/"


def test_serve_refuses_a_folder_without_index(tmp_path):
    from export.serve import main

    assert main(["--dir", str(tmp_path), "--port", "0"]) == 2


def test_missing_node_modules_gives_a_clear_error(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("site_assets_hook", ROOT / "site_src/hooks/site_assets.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    monkeypatch.setattr(hook, "NODE_MODULES", tmp_path / "node_modules")
    from mkdocs.exceptions import Abort

    with pytest.raises(Abort, match="npm ci"):
        hook.on_pre_build({})
