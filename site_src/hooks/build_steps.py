"""MkDocs hook: the steps after the pages are built, run in the order written here.

Each step is a hook of its own (listed in mkdocs.yml for its other events) with
a ``post_build(config)`` that writes into ``site/``; MkDocs would call
``on_post_build`` hooks in the order of mkdocs.yml, which only comments could
explain, so the order lives here instead, in one list, with why.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.exceptions import PluginError

STEPS = (
    "site_assets",  # copies site_src/<folder>/, wasm_assets/ and the npm runtime files into site/: first
    "stepper_code",  # page 4's stepper sections, site/js/lesson/stepper_code.json
    "downloads",  # the code zip and the notebook
    "python_heap",  # the exercise's Python heap, made in Node from the Pyodide that site_assets copied
    "editor_bundle",  # CodeMirror for the exercise, over the copy of site_src/js that site_assets made
    "asset_versions",  # every runtime file is written now: content versions, site/build.json, asset_map.js
    "python_prestart",  # after asset_versions: its asset_map.js goes into the exercise's prestart script
    "service_worker",  # last, over every file the steps above wrote: site/sw.js
)


def hooks_by_name(config) -> dict:
    """The hook modules MkDocs loaded (the same instances, with the state their page events collected)."""
    return {Path(name).stem: module for name, module in config["hooks"].items()}


def on_post_build(config) -> None:
    hooks = hooks_by_name(config)
    missing = [step for step in STEPS if step not in hooks]
    if missing:
        raise PluginError(f"build_steps: list {', '.join(missing)} under hooks: in mkdocs.yml")
    for step in STEPS:
        hooks[step].post_build(config)
