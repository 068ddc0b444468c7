"""MkDocs hook: a page with the Python exercise starts Python while it is parsed.

A module script runs only once the whole page is parsed (~0.4 s on a busy
laptop), and the exercise's widget after the theme's and the page's scripts.
So, after ``asset_versions.py`` has written this build's ``asset_map.js``
(list this hook after it and before ``service_worker.py``, which precaches
what it writes), it

* bundles ``js/microgpt/prestart.js`` and the modules it imports (the runner,
  the snapshot record, the asset map) with esbuild into one classic script,
  ``js/microgpt/prestart.bundle.js``;
* adds that script to the head of every page that holds an exercise's widget
  (microgpt's ``data-mha-widget="microgpt-exercise"``, or any widget naming an
  exercise of functions' one file, ``data-exercise="pyodide/exercises/…"``,
  which the tag passes on), where it runs before the body is parsed and boots
  the first Python worker with that exercise's files (the widget claims that
  runner, ``runner.js`` ``claimRunner``).

``import.meta.url`` becomes the bundle's own address, which lies in
``js/microgpt/`` like ``runner.js``, so the worker's and the site's addresses
resolve as they do in the modules.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from mkdocs.exceptions import Abort

ROOT = Path(__file__).resolve().parents[2]
ESBUILD = ROOT / "node_modules" / ".bin" / "esbuild"
ENTRY = Path("js") / "microgpt" / "prestart.js"
BUNDLE = Path("js") / "microgpt" / "prestart.bundle.js"
MICROGPT = 'data-mha-widget="microgpt-exercise"'
# An exercise of functions: its widget names the exercise's one file (attributes in any order).
FUNCTIONS = re.compile(r'<(?=[^>]*\bdata-mha-widget=")[^>]*\bdata-exercise="([^"]+)"')
CHARSET = re.compile(r"<meta charset=[^>]*>", re.IGNORECASE)  # stays first: it must come within 1024 bytes
# Read while the script runs (document.currentScript), kept for workers started later.
BANNER = "var mhaPrestartUrl = document.currentScript && document.currentScript.src;"


def bundle(site: Path) -> Path:
    if not ESBUILD.exists():
        raise Abort(f"{ESBUILD.relative_to(ROOT)} is missing: run `npm ci` in {ROOT} and build again.")
    out = site / BUNDLE
    staged = out.with_name(f".{out.name}.partial")
    proc = subprocess.run(
        [
            str(ESBUILD),
            str(site / ENTRY),
            "--bundle",
            "--format=iife",
            "--minify",
            "--target=es2020",
            "--define:import.meta.url=mhaPrestartUrl",
            f"--banner:js={BANNER}",
            f"--outfile={staged}",
            "--log-level=warning",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode or not staged.is_file():
        raise Abort(f"esbuild could not bundle {ENTRY}:\n{proc.stderr.strip()}")
    staged.replace(out)
    return out


def head_tag(page_url: str, exercise: str = "") -> str:
    """The script tag for a page at `page_url` (a directory URL such as "microgpt/"), naming `exercise`'s file."""
    depth = len([part for part in page_url.split("/") if part])
    named = f' data-exercise="{exercise}"' if exercise else ""
    return f'<script src="{"../" * depth}{BUNDLE.as_posix()}"{named}></script>\n'


def on_post_page(output: str, page, config) -> str:
    functions = FUNCTIONS.search(output)
    if (MICROGPT not in output and not functions) or "</head>" not in output:
        return output
    tag = head_tag(page.url, functions.group(1) if functions else "")
    charset = CHARSET.search(output, 0, output.index("</head>"))
    if not charset:
        return output.replace("</head>", tag + "</head>", 1)
    # First in the head: a classic script waits for every stylesheet above it,
    # and the worker it creates starts only when the page's thread is free
    # between tasks, so it must be asked for before the theme's long scripts.
    return output[: charset.end()] + "\n" + tag + output[charset.end() :]


def post_build(config) -> None:
    bundle(Path(config["site_dir"]))
