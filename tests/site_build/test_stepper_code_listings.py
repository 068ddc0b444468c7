"""The code the stepper shows (site_src/hooks/stepper_code.py): the files' own lines, markers never shown."""

from __future__ import annotations

import html
import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "site_src" / "hooks"))

import stepper_code  # noqa: E402

# the sections the stepper's steps name (site_src/js/lesson/stepper_steps.js and the step modules it gathers)
USED = re.compile(r'"((?:export/[\w/]+\.py)#[\w-]+)"')


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def test_every_section_is_its_files_lines_without_markers():
    sections = stepper_code.sections()
    assert sections
    for key, s in sections.items():
        lines = (ROOT / s["path"]).read_text(encoding="utf-8").splitlines()
        assert _text(s["html"]) == textwrap.dedent("\n".join(lines[s["start"] - 1 : s["end"]])), key
        assert "# lesson" not in _text(s["html"]), key


def test_every_section_the_widget_names_exists():
    modules = sorted((ROOT / "site_src/js/lesson").glob("stepper_steps*.js"))
    source = "\n".join(p.read_text(encoding="utf-8") for p in modules)
    named = set(USED.findall(source))
    assert len(named) >= 12
    assert named <= set(stepper_code.sections()), named - set(stepper_code.sections())
