"""MkDocs hook: the code lines page 4's forward-pass stepper shows, read from the files at build time.

The stepper (``site_src/js/lesson/stepper.js``) shows, at each operation, the
lines of ``export/multihead.py`` that do it. They are the same sections as the
page's listings (``# lesson: NAME`` markers, read by ``code_snippets.read_section``,
so marker lines are never shown), highlighted here with Pygments as the page's
own code blocks are, and written to ``site/js/lesson/stepper_code.json``:

    {"sections": {"export/multihead.py#full-scores":
        {"path", "name", "start", "end", "html"}, ...}}

The widget fetches that file only when the learner opens the stepper. Its model
choice is drawn before then, so the page carries it: ``on_page_content`` gives
the slot ``data-models``, the manifest's models with a teaching graph, most
heads first (name and label; the widget types no model name). Every
marked section of the files in ``FILES`` is written, so the widget may name
any of them; a name the widget asks for that is missing here is a test failure
(``tests/browser/lesson/test_stepper.py``), not a silent blank.
"""

from __future__ import annotations

import html as html_lib
import json
import logging
import sys
from pathlib import Path

import export.artefacts as artefacts  # standard library only: the build reads the manifest, never computes

_HOOKS = str(Path(__file__).resolve().parent)
if _HOOKS not in sys.path:
    sys.path.append(_HOOKS)
from code_snippets import MARKER, ROOT, read_section

log = logging.getLogger("mkdocs.hooks.stepper_code")

FILES = ("export/multihead.py", "export/generate.py", "export/windows.py")
OUTPUT = "js/lesson/stepper_code.json"


def sections(root: Path = ROOT) -> dict:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    lexer, formatter = PythonLexer(), HtmlFormatter(nowrap=True)
    out = {}
    for path in FILES:
        lines = (root / path).read_text(encoding="utf-8").splitlines()
        names = [m.group("name") for line in lines if (m := MARKER.match(line)) and m.group("name")]
        for name in names:
            section = read_section(path, name, root)
            out[f"{path}#{name}"] = {
                "path": path,
                "name": name,
                "start": section.start,
                "end": section.end,
                "html": highlight(section.text, lexer, formatter).rstrip("\n"),
            }
    return out


SLOT = 'data-mha-widget="stepper"'


def stepper_models(manifest_path: Path | None = None) -> list[list[str]]:
    """[name, label] of every manifest model with a teaching graph, most heads first (the default first)."""
    manifest = json.loads((manifest_path or artefacts.Artefacts().manifest).read_text(encoding="utf-8"))
    models = sorted((m for m in manifest["models"] if m.get("steps") and m["heads"] > 0), key=lambda m: -m["heads"])
    return [[m["name"], m["label"]] for m in models]


def on_page_content(html: str, page, config, files) -> str:
    if SLOT not in html:
        return html
    models = html_lib.escape(json.dumps(stepper_models(), separators=(",", ":")), quote=True)
    return html.replace(SLOT, f'{SLOT} data-models="{models}"')


def post_build(config) -> None:
    target = Path(config["site_dir"]) / OUTPUT
    target.parent.mkdir(parents=True, exist_ok=True)
    data = {"sections": sections()}
    target.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    log.info("stepper_code: %d code sections written to %s", len(data["sections"]), OUTPUT)
