"""Two palettes, written once: heads (export/palette.py) and models (the registry), never sharing a colour."""

from __future__ import annotations

import itertools
import json

from export.artefacts import Artefacts
from export.models import MODELS, shipped_models
from export.palette import HEAD_DARK, HEAD_LIGHT, css, distance

# Below this RGB distance two colours read as the same one on a small swatch (a coarse, stated guard).
DISTINCT = 80


def test_palette_css_is_what_the_registry_and_palette_module_write_now():
    assert Artefacts().palette_css.read_text() == css(MODELS), "run `python -m export palette`"


def test_model_colours_never_near_a_head_colour_in_either_scheme():
    for heads, models in ((HEAD_LIGHT, [m.colour for m in MODELS]), (HEAD_DARK, [m.colour_dark for m in MODELS])):
        for h, m in itertools.product(heads, models):
            assert distance(h, m) >= DISTINCT, (h, m)
        for a, b in itertools.combinations(heads, 2):
            assert distance(a, b) >= DISTINCT, (a, b)
        for a, b in itertools.combinations(models, 2):
            assert distance(a, b) >= DISTINCT, (a, b)


def test_manifest_carries_the_registry_colours():
    manifest = json.loads(Artefacts().manifest.read_text())
    shown = {m["name"]: (m["colour"], m["colour_dark"]) for m in manifest["models"]}
    assert shown == {s.name: (s.colour, s.colour_dark) for s in shipped_models()}
