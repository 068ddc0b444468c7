"""The browser code's house rules, read from the JS sources (no browser, no Node).

* Every widget main.js mounts takes and gives back its slot through runtime/widget.js
  (claim / claimLoaded on mount, release on dispose) and keeps no register of slots of its own.
* One module crops a story to the context window (runtime/context.js).
* Colours are typed in the palette module only (runtime/palette.js), and head and model
  colours reach a script only through it, as the palette's CSS variables. (The stylesheets'
  side of the rule, colours typed only in site_src/css/colours.css, is test_css_palette.py.)
* No module passes 500 lines.
* A module that loads the model manifest and vocab.json checks that they belong together through
  runtime/manifest_check.js (one home for that check).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "site_src" / "js"
MAX_LINES = 500

CROP_MODULE = "runtime/context.js"
PALETTE_MODULE = "runtime/palette.js"


def modules() -> dict[str, str]:
    """Every JS module of the site and of its build hooks: path relative to site_src/js (or site_src) -> source."""
    found = {p.relative_to(JS).as_posix(): p.read_text() for p in sorted(JS.rglob("*.js"))}
    found |= {
        p.relative_to(ROOT / "site_src").as_posix(): p.read_text()
        for p in sorted((ROOT / "site_src" / "hooks").rglob("*.*js"))
    }
    return found


def widget_modules() -> dict[str, str]:
    """main.js's WIDGETS table: widget name -> module path relative to site_src/js."""
    main = (JS / "main.js").read_text()
    table = re.search(r"const WIDGETS = \{(.*?)\n\};", main, re.S)
    assert table, "main.js has no WIDGETS table"
    return {name: path for name, path in re.findall(r'"?([\w-]+)"?:\s*"\./([^"]+\.js)"', table.group(1))}


def code_only(source: str) -> str:
    """The source without its comments (a comment may name what the code must not do)."""
    source = re.sub(r"/\*.*?\*/", "", source, flags=re.S)
    return re.sub(r"(?m)(^|[^:\\])//.*$", r"\1", source)


def function_body(source: str, name: str) -> str | None:
    """The text of `export [async] function NAME(...) {...}` up to its closing brace at column 0."""
    match = re.search(rf"^export (?:async )?function {name}\(.*?^\}}", source, re.S | re.M)
    return match.group(0) if match else None


def test_the_widget_table_lists_every_widget_module():
    table = widget_modules()
    assert len(table) >= 20, table
    for name, path in table.items():
        assert (JS / path).is_file(), f"main.js mounts {name} from {path}, which does not exist"


@pytest.mark.parametrize("name", sorted(widget_modules()))
def test_each_widget_mounts_and_releases_through_the_contract(name):
    path = widget_modules()[name]
    source = code_only((JS / path).read_text())
    mount, dispose = function_body(source, "mount"), function_body(source, "dispose")
    assert mount and dispose, f"{path} must export mount(root) and dispose(root)"
    assert re.search(r"import \{[^}]*\b(claim|claimLoaded)\b[^}]*\} from \"[./]*runtime/widget\.js\"", source), (
        f"{path} does not take its slot through runtime/widget.js"
    )
    assert re.search(r"\b(claim|claimLoaded)\(", mount), f"{path}: mount() does not claim its slot (runtime/widget.js)"
    assert re.search(r"\brelease\(", dispose), f"{path}: dispose() does not release its slot (runtime/widget.js)"
    # A register of its own beside the contract's: roots kept in a map or set, or marked on the element.
    own = re.findall(r"\.(?:set|has|add|delete)\(root\b|dataset\.mhaMounted", source)
    assert not own, f"{path} keeps its own register of mounted slots ({own}): use claim/release"


def test_the_contract_catches_a_widget_that_keeps_its_own_register():
    """The rule above, on a widget written the old way."""
    old = """export function mount(root) {
  if (state.has(root)) return;
  state.set(root, {});
}
export function dispose(root) {
  state.delete(root);
}
"""
    assert not re.search(r"\b(claim|claimLoaded)\(", function_body(old, "mount"))
    assert re.findall(r"\.(?:set|has|add|delete)\(root\b", old)


CROP = re.compile(r"\.slice\(\s*(?:Math\.max\(\s*0\s*,\s*[\w.]+\.length\s*-|-\s*(?:this\.)?[A-Za-z_]\w*\s*\))")


def test_one_module_crops_to_the_context_window():
    croppers = sorted(path for path, source in modules().items() if CROP.search(code_only(source)))
    assert croppers == [CROP_MODULE], f"the crop to the last T tokens is written in {croppers}; use {CROP_MODULE}"
    assert CROP.search("const visible = history.slice(Math.max(0, history.length - T));")
    assert CROP.search("tokens.slice(-n)")
    assert not CROP.search("text.slice(0, MAX_PROMPT_CHARS)")


COLOUR = re.compile(r"""["'`][^"'`\n]*?(#[0-9a-fA-F]{3,8}\b|\b(?:rgba?|hsla?)\(\s*[\d.]+)""")


def test_colours_are_typed_in_the_palette_module_only():
    typed = {}
    for path, source in modules().items():
        if path == PALETTE_MODULE:
            continue
        found = [m.group(1) for m in COLOUR.finditer(code_only(source))]
        if found:
            typed[path] = found
    assert not typed, f"colours typed outside {PALETTE_MODULE} (read the palette's CSS variables there): {typed}"
    assert COLOUR.search('const FALLBACK = ["#E69F00", "#0072B2"];')
    assert COLOUR.search('ctx.fillStyle = "rgb(0, 114, 178)";')
    assert not COLOUR.search("`rgb(${r}, ${g}, ${b})`")  # computed from a colour map, not typed


def test_head_and_model_colours_come_through_the_palette_module():
    """The palette's variables are named in one module, so a head's colour has one route into a script."""
    naming = sorted(
        path
        for path, source in modules().items()
        if path != PALETTE_MODULE and re.search(r"--mha-(head|model)\b", code_only(source))
    )
    assert not naming, f"{naming} name the palette's head or model variables; use {PALETTE_MODULE}"


def test_no_module_passes_500_lines():
    long = {path: n for path, source in modules().items() if (n := source.count("\n")) > MAX_LINES}
    assert not long, f"split these by their jobs (at most {MAX_LINES} lines each): {long}"


MANIFEST_CHECK_MODULE = "runtime/manifest_check.js"
LOADS = re.compile(r"""loadJSON\(\s*["'`]wasm_assets/(models/manifest|vocab)\.json""")


def test_a_widget_that_loads_the_manifest_and_vocabulary_checks_them_in_one_module():
    """Every module that loads both files asks runtime/manifest_check.js whether they belong together."""
    loaders = {
        path: source
        for path, source in modules().items()
        if {m.group(1) for m in LOADS.finditer(code_only(source))} == {"models/manifest", "vocab"}
    }
    assert len(loaders) >= 4, sorted(loaders)  # compare, stepper, build exercise, home page
    unchecked = sorted(
        path
        for path, source in loaders.items()
        if not re.search(r"\b(checkManifest|manifestMismatch)\(", code_only(source))
        or MANIFEST_CHECK_MODULE.split("/")[1] not in source
    )
    assert not unchecked, f"{unchecked} load the manifest and vocab.json without {MANIFEST_CHECK_MODULE}"
