"""Where a built site holds a runtime file: the build versions them
(site_src/hooks/asset_versions.py), so vendor/ort/x lies in vendor/ort/<digest>/x
and wasm_assets/x is asked for as wasm_assets/x?v=<digest>. Tests name files by
their plain paths and look them up here, by the same rule as siteUrl()."""

from __future__ import annotations

import json
from pathlib import Path


def versions(site: Path) -> dict:
    return json.loads((site / "build.json").read_text())


def url_path(site: Path, path: str) -> str:
    """The site path (with ?v=) under which the pages ask for `path`."""
    v = versions(site)
    if path in v["files"]:
        return f"{path}?v={v['files'][path]}"
    for prefix, target in v["folders"].items():
        if path.startswith(prefix):
            return target + path[len(prefix) :]
    return path


def built_file(site: Path, path: str) -> Path:
    """The file itself in the built site."""
    return site / url_path(site, path).split("?", 1)[0]


def route_pattern(path: str):
    """A page.route pattern for `path` however this build versions it (a digest
    folder under vendor/<package>/, or ?v=<digest>)."""
    import re

    head, _, rest = path.partition("/")
    if head == "vendor" and "/" in rest:
        package, _, name = rest.partition("/")
        body = rf"vendor/{re.escape(package)}/(?:[0-9a-f]{{12}}/)?{re.escape(name)}"
    else:
        body = re.escape(path)
    return re.compile(rf"/{body}(?:\?[^#]*)?$")
