"""The stylesheets' house rule, the CSS side of test_js_house_rules.py's palette rule.

* Colours are typed in one stylesheet only, the site's palette (site_src/css/colours.css), light
  and dark, and in the generated head and model palette (wasm_assets/palette.css, written by
  `python -m export palette`). Every other stylesheet under site_src/css names them as var(--...).
* The palette is linked first among the site's own stylesheets (after wasm_assets/palette.css), so
  every later sheet finds its variables defined.
* A page's inline style= (docs/*.md, site_src/overrides) types no colour either.

A typed colour is a hex colour, a colour function (rgb(), hsl(), hwb(), lab(), lch(), oklab(),
oklch(), color()) or a colour's name (white, black, red ...) in a property's value; transparent,
currentColor and inherit are keywords, not colours, and pass.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
CSS = ROOT / "site_src" / "css"
PALETTE_SHEET = "colours.css"
GENERATED_PALETTE = "wasm_assets/palette.css"

# CSS Color 4's named colours (https://www.w3.org/TR/css-color-4/#named-colors).
NAMED = """aliceblue antiquewhite aqua aquamarine azure beige bisque black blanchedalmond blue blueviolet
brown burlywood cadetblue chartreuse chocolate coral cornflowerblue cornsilk crimson cyan darkblue
darkcyan darkgoldenrod darkgray darkgreen darkgrey darkkhaki darkmagenta darkolivegreen darkorange
darkorchid darkred darksalmon darkseagreen darkslateblue darkslategray darkslategrey darkturquoise
darkviolet deeppink deepskyblue dimgray dimgrey dodgerblue firebrick floralwhite forestgreen fuchsia
gainsboro ghostwhite gold goldenrod gray green greenyellow grey honeydew hotpink indianred indigo
ivory khaki lavender lavenderblush lawngreen lemonchiffon lightblue lightcoral lightcyan
lightgoldenrodyellow lightgray lightgreen lightgrey lightpink lightsalmon lightseagreen lightskyblue
lightslategray lightslategrey lightsteelblue lightyellow lime limegreen linen magenta maroon
mediumaquamarine mediumblue mediumorchid mediumpurple mediumseagreen mediumslateblue
mediumspringgreen mediumturquoise mediumvioletred midnightblue mintcream mistyrose moccasin
navajowhite navy oldlace olive olivedrab orange orangered orchid palegoldenrod palegreen
paleturquoise palevioletred papayawhip peru pink plum powderblue purple rebeccapurple red rosybrown
royalblue saddlebrown salmon sandybrown seagreen seashell sienna silver skyblue slateblue slategray
slategrey snow springgreen steelblue tan teal thistle tomato turquoise violet wheat white whitesmoke
yellow yellowgreen""".split()

# A value's colour, typed: hex, a colour function, or (checked only where a property takes a colour) a name.
TYPED = re.compile(r"#[0-9a-fA-F]{3,8}\b|\b(?:rgba?|hsla?|hwb|lab|lch|oklab|oklch|color)\(", re.I)
NAME = re.compile(rf"(?<![\w-])({'|'.join(NAMED)})(?![\w-])", re.I)
# Properties whose value may hold a colour (a name there is a colour; elsewhere a word such as
# `white-space: nowrap` or `font-family: Roboto` is not).
COLOUR_PROPERTY = re.compile(
    r"^(?:--.*|color|accent-color|caret-color|fill|stroke|stop-color|flood-color|lighting-color"
    r"|background(?:-color|-image)?|border(?:-(?:top|right|bottom|left|block|inline)(?:-(?:start|end))?)?(?:-color)?"
    r"|outline(?:-color)?|column-rule(?:-color)?|text-decoration(?:-color)?|text-emphasis(?:-color)?"
    r"|box-shadow|text-shadow|scrollbar-color|-webkit-text-fill-color|-webkit-text-stroke(?:-color)?)$",
    re.I,
)


def declarations(css: str) -> list[tuple[str, str]]:
    """Every (property, value) inside a rule's braces, comments dropped (a comment may name a colour)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    found = []
    for block in re.findall(r"\{([^{}]*)\}", css):  # innermost blocks: a rule's declarations
        for declaration in block.split(";"):
            prop, colon, value = declaration.partition(":")
            if colon:
                found.append((prop.strip(), value.strip()))
    return found


def typed_colours(css: str) -> list[str]:
    """`property: value` for each declaration that types a colour."""
    typed = []
    for prop, value in declarations(css):
        # A variable's name (--mha-error-red), a url() or a string is no colour, whatever it holds.
        plain = re.sub(r"--[\w-]+|url\([^)]*\)|\"[^\"]*\"|'[^']*'", "", value)
        if TYPED.search(plain) or (COLOUR_PROPERTY.match(prop) and NAME.search(plain)):
            typed.append(f"{prop}: {value}")
    return typed


def stylesheets() -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(CSS.glob("*.css"))}


def test_the_pattern_catches_typed_colours_and_passes_variables():
    for typed in (
        ".a { color: #c62828; }",
        ".a { border-left-color: #F9A825 }",
        ".a { background: rgb(33, 144, 141); }",
        ".a { background: rgba(253, 231, 37, 0.28); }",
        ".a { color: hsl(120 50% 40%); }",
        ".a { background: linear-gradient(90deg, rgb(68, 1, 84), var(--mha-viridis-100)); }",
        ".a { background: color-mix(in srgb, var(--md-code-bg-color), #000 6%); }",
        ".a { color: white; }",
        ".a { border: 1px solid Black; }",
        ".a { box-shadow: inset 0 0 0 2px red; }",
        ":root { --mha-error: red; }",
        "@media (max-width: 30em) { .a { stroke: navy; } }",
    ):
        assert typed_colours(typed), typed
    for clean in (
        ".a { color: var(--mha-error); }",
        ".a { background: linear-gradient(90deg, var(--mha-viridis-0), var(--mha-viridis-100)); }",
        ".a { color: transparent; border-color: currentColor; fill: inherit; }",
        ".a { white-space: nowrap; font-family: Roboto, sans-serif; }",
        ".a { border-bottom: 0.2rem solid var(--mha-head-red); }",
        "/* a #c43e00 orange, named in a comment */ .a { color: var(--md-accent-fg-color); }",
        "#main .a { color: var(--mha-ok); }",  # an id in a selector is no colour
        ".a { clip: rect(0 0 0 0); }",
        '.a::before { content: "#1 red"; }',
    ):
        assert not typed_colours(clean), clean


def test_colours_are_typed_in_the_palette_stylesheet_only():
    sheets = stylesheets()
    assert PALETTE_SHEET in sheets and len(sheets) >= 10, sorted(sheets)
    assert typed_colours(sheets[PALETTE_SHEET]), f"{PALETTE_SHEET} types no colour: is it still the palette?"
    typed = {name: found for name, css in sheets.items() if name != PALETTE_SHEET and (found := typed_colours(css))}
    assert not typed, f"colours typed outside site_src/css/{PALETTE_SHEET} (name them there, use var(--...)): {typed}"


def test_the_palette_is_linked_before_the_sheets_that_use_it():
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)
    own = [path for path in config["extra_css"] if not path.startswith(("http:", "https:"))]
    assert own[:2] == [GENERATED_PALETTE, f"css/{PALETTE_SHEET}"], own
    assert sorted(own[2:]) == sorted(f"css/{name}" for name in stylesheets() if name != PALETTE_SHEET), (
        "every stylesheet under site_src/css is linked once, after the palette"
    )


STYLE = re.compile(r"""\sstyle\s*=\s*(["'])(.*?)\1""", re.S | re.I)


def inline_colours(text: str) -> list[str]:
    """The inline style= attributes of a page or template that type a colour."""
    return [style for _, style in STYLE.findall(text) if typed_colours("{" + style + "}")]


def test_inline_styles_type_no_colour():
    files = sorted((ROOT / "docs").rglob("*.md")) + sorted((ROOT / "site_src" / "overrides").rglob("*.html"))
    assert len(files) >= 10, files
    typed = {str(p.relative_to(ROOT)): found for p in files if (found := inline_colours(p.read_text()))}
    assert not typed, f"inline styles that type a colour (use a class or a var(--...)): {typed}"
    assert inline_colours('<span style="color:#c62828">no</span>')
    assert inline_colours("<p style='border: 1px solid white'>")
    assert not inline_colours('<p style="text-align:center">')
    assert not inline_colours('<tr style="--head:var(--mha-head-1)">')
