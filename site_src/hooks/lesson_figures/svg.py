"""SVG drawing primitives. Every helper returns a string; coordinates are SVG units.

Colours are CSS classes (``site_src/css/figures.css``) and text uses ``currentColor``,
so one drawing works in light and dark mode.
"""

from __future__ import annotations

import html
import math
import re

FONT = 13  # SVG units; figures are at most about 400 units wide so they stay readable on a 390 px phone


def esc(text) -> str:
    return html.escape(str(text), quote=True)


def text(x, y, s, cls="", anchor="start", size=None, weight=None) -> str:
    attrs = f'x="{x:g}" y="{y:g}"'
    if anchor != "start":
        attrs += f' text-anchor="{anchor}"'
    if size:
        attrs += f' font-size="{size:g}"'
    if weight:
        attrs += f' font-weight="{weight}"'
    if cls:
        attrs += f' class="{cls}"'
    return f"<text {attrs}>{esc(s)}</text>"


def y_title(y, s, size=FONT) -> str:
    """A vertical axis title by the figure's left edge, centred on ``y``. Turned, its letters stand to the
    left of its baseline: one font size and a gap in, they clear the edge (on a phone, the screen's)."""
    return (
        f'<text transform="translate({size + 3:g},{y:g}) rotate(-90)" text-anchor="middle" '
        f'class="mha-fig__small" font-size="{size:g}">{esc(s)}</text>'
    )


def rect(x, y, w, h, cls="", rx=0, extra="") -> str:
    r = f' rx="{rx:g}"' if rx else ""
    c = f' class="{cls}"' if cls else ""
    return f'<rect x="{x:g}" y="{y:g}" width="{max(w, 0):g}" height="{max(h, 0):g}"{r}{c}{extra}/>'


def line(x1, y1, x2, y2, cls="mha-fig__wire") -> str:
    return f'<line x1="{x1:g}" y1="{y1:g}" x2="{x2:g}" y2="{y2:g}" class="{cls}"/>'


def path(d, cls="mha-fig__wire") -> str:
    return f'<path d="{d}" class="{cls}"/>'


def arrow(x1, y1, x2, y2, cls="mha-fig__wire") -> str:
    return f'<line x1="{x1:g}" y1="{y1:g}" x2="{x2:g}" y2="{y2:g}" class="{cls}" marker-end="url(#mha-arrow)"/>'


ARROW_DEF = (
    '<defs><marker id="mha-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
    'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="mha-fig__arrowhead"/>'
    '</marker><pattern id="mha-hatch" width="5" height="5" patternUnits="userSpaceOnUse" '
    'patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="5" class="mha-fig__hatch"/></pattern></defs>'
)


def box(x, y, w, h, lines, cls="", learned=False, href=None, box_id=None, label=None) -> str:
    """A labelled box; ``lines`` are (text, css class) pairs drawn centred, first line bold."""
    kind = "mha-fig__box mha-fig__box--learned" if learned else "mha-fig__box"
    parts = [rect(x, y, w, h, f"{kind} {cls}".strip(), rx=5)]
    n = len(lines)
    step = FONT + 2
    top = y + h / 2 - (n - 1) * step / 2 + FONT * 0.35
    for i, (s, c) in enumerate(lines):
        parts.append(
            text(
                x + w / 2,
                top + i * step,
                s,
                c,
                anchor="middle",
                weight="700" if i == 0 else None,
                size=FONT if i == 0 else FONT - 1.5,
            )
        )
    inner = "".join(parts)
    gid = f' id="{box_id}"' if box_id else ""
    if href:
        aria = esc(label or " ".join(s for s, _ in lines))
        return f'<a xlink:href="{esc(href)}" class="mha-fig__link"{gid} aria-label="{aria}"><g>{inner}</g></a>'
    return f"<g{gid}>{inner}</g>"


MIN_TEXT_PX = 11  # the smallest text a figure may show, in CSS pixels, on any screen (a 390 px phone too)
_FONT_SIZE = re.compile(r'font-size="([0-9.]+)"')


def min_width(width: float, body: str) -> float:
    """The narrowest the figure may be drawn (CSS px) so that its smallest text stays MIN_TEXT_PX.

    A phone shrinks a figure to the column's width; below this width the figure keeps its size
    and its box (``.mha-fig__scroll``) scrolls sideways instead of shrinking the text."""
    smallest = min([FONT, *(float(v) for v in _FONT_SIZE.findall(body))])
    return math.ceil(width * (MIN_TEXT_PX + 0.2) / smallest)


def svg(name: str, width: float, height: float, title: str, desc: str, body: str, links: bool = False) -> str:
    """The SVG element. ``role="img"`` hides an image's inside from assistive technology, so a figure whose
    boxes are links is a ``group`` instead (named and described the same way), and its links stay reachable."""
    role = "group" if links else "img"
    scale = 1.35  # CSS pixels per unit on a wide screen (text about the size of the page's); phones shrink it
    return (
        f'<svg class="mha-fig__svg" viewBox="0 0 {width:g} {height:g}" width="{width * scale:.0f}" '
        f'height="{height * scale:.0f}" style="min-width:{min_width(width, body):.0f}px" '
        f'xmlns:xlink="http://www.w3.org/1999/xlink" role="{role}" '
        f'aria-labelledby="fig-{name}-title fig-{name}-desc" font-size="{FONT}">'
        f'<title id="fig-{name}-title">{esc(title)}</title><desc id="fig-{name}-desc">{esc(desc)}</desc>'
        f"{ARROW_DEF}{body}</svg>"
    )


def shape(dims) -> str:
    return "[" + ", ".join(f"{d:,}" if isinstance(d, int) else str(d) for d in dims) + "]"


def display(token: str) -> str:
    """Special tokens without their angle brackets (they read as HTML tags in captions)."""
    return token[1:-1] if token.startswith("<") and token.endswith(">") else token


def pct(x: float) -> str:
    return f"{x:.2f}"
