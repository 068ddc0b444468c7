"""The site's two palettes, written once, that never share a colour: heads and models.

* Heads: head k has the same colour in every figure, table and widget — the
  Okabe-Ito blue, vermillion, bluish green and reddish purple, darker in the
  light scheme and lighter in the dark one so lines and text keep their
  contrast. The atlas image and the compare page's inspector read them from
  the evidence (``heads.colours``, from ``HEAD_LIGHT``).
* Models: the registry's own colours (``export/models.py``, ``colour`` and
  ``colour_dark``), greys and an olive, so that a model is never mistaken
  for a head.

``python -m export palette`` writes both as CSS custom properties into
``wasm_assets/palette.css`` (``--mha-head-1`` .., ``--mha-model-<name>``, and a
class ``.mha-model--<name>`` that sets ``--mha-model``), which the site links
before its own styles; the manifest carries each model's colours too.
"""

from __future__ import annotations

HEAD_LIGHT = ("#0072b2", "#c24f00", "#007a5a", "#a8417f")
HEAD_DARK = ("#56b4e9", "#f08c4b", "#3cc79c", "#e59fc9")


def _rgb(colour: str) -> tuple[int, int, int]:
    c = colour.lstrip("#")
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


def distance(a: str, b: str) -> float:
    """Euclidean distance in RGB (0..441): a coarse guard that two colours are not the same or near it."""
    return sum((x - y) ** 2 for x, y in zip(_rgb(a), _rgb(b))) ** 0.5


def css(models) -> str:
    """The stylesheet: ``models`` are registry specs with ``name``, ``colour`` and ``colour_dark``."""
    light = [f"  --mha-head-{k + 1}: {c};" for k, c in enumerate(HEAD_LIGHT)]
    dark = [f"  --mha-head-{k + 1}: {c};" for k, c in enumerate(HEAD_DARK)]
    light += [f"  --mha-model-{m.name}: {m.colour.lower()};" for m in models]
    dark += [f"  --mha-model-{m.name}: {m.colour_dark.lower()};" for m in models]
    classes = [
        f".mha-model--{m.name} {{ --mha-model: var(--mha-model-{m.name}); }}"
        for m in models
    ]
    return (
        "/* Written by `python -m export palette` from export/palette.py (heads) and the registry in\n"
        "   export/models.py (models). Do not edit: change those and run it again. */\n"
        ":root {\n" + "\n".join(light) + "\n}\n"
        '[data-md-color-scheme="slate"] {\n'
        + "\n".join(dark)
        + "\n}\n"
        + "\n".join(classes)
        + "\n"
    )


def write(path, models=None, log=print):
    from . import atomic
    from .models import MODELS

    path = atomic.write_text(path, css(models if models is not None else MODELS))
    log(f"wrote {path}")
    return path


def stage(ctx) -> None:
    write(ctx.art.palette_css)
