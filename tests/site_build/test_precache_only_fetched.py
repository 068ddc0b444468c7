"""The service worker precaches only what a page fetches from wasm_assets/ (site_src/hooks/service_worker.py).

A precached file is downloaded on a reader's first visit whether or not any
page ever asks for it, so every precached file of wasm_assets/ must be named
by a script of the site (site_src/js/) or loaded by a page (a link, script or
img element); and every file of wasm_assets/ a script names must be there
offline (precached, or cached on first use).
"""

from __future__ import annotations

import re
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "site_src" / "js").rglob("*.js"))
MANIFEST_ENTRY = re.compile(r'\{"revision":(?:"[0-9a-f]+"|null),"url":"([^"]+)"\}')
LOADED_BY_PAGE = re.compile(r'<(?:link|script|img)\b[^>]*\b(?:href|src)="[^"]*?(wasm_assets/[^"?#]+)', re.I)


def precached(site: Path) -> set[str]:
    return set(MANIFEST_ENTRY.findall((site / "sw.js").read_text()))


def script_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in SCRIPTS)


def loaded_by_pages(site: Path) -> set[str]:
    return {m for page in site.rglob("*.html") for m in LOADED_BY_PAGE.findall(page.read_text(encoding="utf-8"))}


def test_every_precached_asset_is_fetched_by_some_page(built_site):
    scripts, pages = script_text(), loaded_by_pages(built_site)
    assets = sorted(u for u in precached(built_site) if u.startswith("wasm_assets/"))
    assert "wasm_assets/vocab.json" in assets  # the test reads the manifest it means to
    unfetched = [u for u in assets if u not in pages and Path(u).name not in scripts]
    assert not unfetched, f"precached but fetched by no page: {unfetched} (add them to NOT_FETCHED)"
    assert "wasm_assets/example_search.json" not in assets  # 494 KB the build has already rendered into page 1


def test_every_asset_a_script_names_is_there_offline(built_site):
    import importlib.util

    spec = importlib.util.spec_from_file_location("service_worker", ROOT / "site_src" / "hooks" / "service_worker.py")
    service_worker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(service_worker)
    runtime = re.compile(service_worker.RUNTIME_PATTERN)
    cached = precached(built_site)
    named = set(re.findall(r"wasm_assets/[\w./-]+\.\w+", script_text()))
    assert named, "no script names a file of wasm_assets/"
    missing = sorted(n for n in named if n not in cached and not runtime.search(n))
    assert not missing, f"named by a script but not kept offline: {missing}"
