"""MkDocs hook: let the browser fetch a page's widget scripts while it parses the page.

``js/main.js`` imports a widget's module only when it finds the widget on the
page, and that module's own imports are discovered one level at a time (the
compare widget's 22 modules are four levels deep): on a repeat visit that
chain of small requests took about 0.2 s before the widget could start
(bench/RESULTS.md, "Issue 22, point 4"). For every ``data-mha-widget="NAME"``
on a page this hook adds ``<link rel="modulepreload">`` to ``<head>`` for the
widget's module and every module it imports statically, so they are fetched
and compiled side by side during the parse; main.js's ``import()`` then finds
them in the module map.

Nothing is listed by hand: the widget names and paths come from ``WIDGETS`` in
``site_src/js/main.js``, the imports from the modules themselves. Dynamic
``import()`` (onnxruntime, Pyodide) and workers are left out: they load only
when a page chooses them.
"""
from __future__ import annotations

import posixpath
import re
from functools import lru_cache
from pathlib import Path

from mkdocs.exceptions import Abort
from mkdocs.utils import get_relative_url

JS = Path(__file__).resolve().parents[1] / "js"
WIDGET_ENTRY = re.compile(r'^\s*"?([\w-]+)"?\s*:\s*"\./([\w/.-]+\.js)"\s*,?\s*$', re.M)
# import ... from "./x.js" / export ... from "../y.js" / import "./z.js" (relative, static only).
STATIC_IMPORT = re.compile(r'^\s*(?:import|export)\s(?:[^;"\']*?\sfrom\s*)?["\'](\.{1,2}/[^"\']+\.js)["\']', re.M)
WIDGET_ATTR = re.compile(r'data-mha-widget="([\w-]+)"')


@lru_cache(maxsize=1)
def widget_modules() -> dict[str, str]:
    """{widget name: its module, relative to site_src/js} from main.js's WIDGETS."""
    source = (JS / "main.js").read_text(encoding="utf-8")
    block = re.search(r"const WIDGETS = \{(.*?)\n\};", source, re.S)
    if not block:
        raise Abort("module_preload: no `const WIDGETS = {...};` in site_src/js/main.js")
    return {name: path for name, path in WIDGET_ENTRY.findall(block.group(1))}


def import_closure(module: str) -> list[str]:
    """`module` and every module it imports statically, in discovery order (paths under js/)."""
    seen: list[str] = []
    todo = [module]
    while todo:
        path = todo.pop(0)
        if path in seen:
            continue
        file = JS / path
        if not file.is_file():
            raise Abort(f"module_preload: site_src/js/{path} is imported but does not exist")
        seen.append(path)
        for target in STATIC_IMPORT.findall(file.read_text(encoding="utf-8")):
            todo.append(posixpath.normpath(posixpath.join(posixpath.dirname(path), target)))
    return seen


def preload_links(html: str, page_url: str) -> str:
    modules: list[str] = []
    for name in dict.fromkeys(WIDGET_ATTR.findall(html)):
        entry = widget_modules().get(name)
        if entry:  # an unknown widget is main.js's to report
            modules += [m for m in import_closure(entry) if m not in modules]
    if not modules:
        return ""
    return "".join(f'<link rel="modulepreload" href="{get_relative_url("js/" + m, page_url)}">' for m in modules)


def on_post_page(output: str, page, config) -> str:
    links = preload_links(output, page.url)
    if not links or "</head>" not in output:
        return output
    return output.replace("</head>", links + "\n</head>", 1)
