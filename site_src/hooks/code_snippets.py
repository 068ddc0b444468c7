"""MkDocs hook: lesson pages show the project's real code, read from the files at build time.

IN A PAGE, a line of its own

    ::code:: export/multihead.py#full-scores

becomes a highlighted code block holding the section ``full-scores`` of
``export/multihead.py``, with the file's own line numbers, a line saying which
file and lines it is, and a link to the code archive (``downloads/mha-lesson.zip``,
built by ``downloads.py``; inside it the file is ``mha-lesson/export/...``).
``#first..last`` shows the lines from the start of section ``first`` to the end
of section ``last``; the marker lines in between show as blank lines, so a learner
never sees a ``# lesson:`` comment and the line numbers stay the file's.
The directive may be indented (inside a ``??? "Show the code"`` door, say): the
block is then indented the same way.
Change the code and the page changes with it; a missing file or section stops
the build with the page, the file and the section named.

IN A SOURCE FILE, a comment line marks where a section starts:

    # lesson: full-scores

The section is the lines after the marker, up to (not including) the first of:

* another marker line (``# lesson: NAME``) or an end marker (``# lesson end``);
* a non-blank line indented less than the marker (the enclosing block ended);
* once the section has started with something, a ``def``, ``class`` or
  decorator line at the marker's indentation or less (the next definition).

Trailing blank lines are dropped and the common indentation is removed, so a
block is always the file's lines ``start``-``end`` de-indented, line for line, with
marker lines blanked (``tests/site_build/test_code_listings_match_files.py`` checks every
block of the built site that way). Markers are never visible in a shown block.
"""

from __future__ import annotations

import html
import logging
import posixpath
import re
import textwrap
from pathlib import Path
from typing import NamedTuple

from mkdocs.exceptions import PluginError

log = logging.getLogger("mkdocs.hooks.code_snippets")

ROOT = Path(__file__).resolve().parents[2]
ARCHIVE = "downloads/mha-lesson.zip"  # site path of the archive built by downloads.py
ARCHIVE_PREFIX = "mha-lesson/"  # folder of the project inside the archive
DIRECTIVE = re.compile(
    r"^(?P<indent>[ \t]*)::code::[ \t]+(?P<path>[\w./-]+)#(?P<name>[\w-]+(?:\.\.[\w-]+)?)[ \t]*$", re.M
)
MARKER = re.compile(r"^(?P<indent>[ \t]*)# lesson(?::[ \t]*(?P<name>[\w-]+)| end)[ \t]*$")
DEFINITION = re.compile(r"^(?:def |class |async def |@)")


class SnippetError(Exception):
    pass


class Section(NamedTuple):
    path: str  # relative to the project root, e.g. "export/multihead.py"
    name: str
    start: int  # first line, 1-based
    end: int  # last line, inclusive
    text: str  # the lines start..end, de-indented


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def find_section(lines: list[str], name: str, path: str = "?") -> tuple[int, int]:
    """1-based (start, end) of section ``name`` in a file's lines (see the module docstring)."""
    marks = [i for i, line in enumerate(lines) if (m := MARKER.match(line)) and m.group("name") == name]
    if not marks:
        raise SnippetError(f"{path} has no section marker '# lesson: {name}'")
    if len(marks) > 1:
        raise SnippetError(
            f"{path} marks section '{name}' {len(marks)} times (lines "
            f"{', '.join(str(i + 1) for i in marks)}); names must be unique in a file"
        )
    m = marks[0]
    base = _indent(lines[m])
    last = None  # index of the last non-blank line of the section
    for i in range(m + 1, len(lines)):
        line = lines[i]
        if MARKER.match(line):
            break
        if not line.strip():
            continue
        indent = _indent(line)
        if indent < base:
            break
        if (
            last is not None
            and indent <= base
            and DEFINITION.match(line.lstrip())
            and not DEFINITION.match(lines[last].lstrip())
        ):
            # a new definition at this level ends the section (a decorator's own def does not)
            break
        last = i
    if last is None:
        raise SnippetError(f"{path} section '{name}' (line {m + 1}) is empty")
    return m + 2, last + 1


def read_section(path: str, name: str, root: Path = ROOT) -> Section:
    file = (root / path).resolve()
    if root.resolve() not in file.parents or not file.is_file():
        raise SnippetError(f"no file {path} in the project")
    lines = file.read_text(encoding="utf-8").splitlines()
    first, _, last = name.partition("..")
    start, end = find_section(lines, first, path)
    if last:
        end = find_section(lines, last, path)[1]
        if end < start:
            raise SnippetError(f"{path}: section '{last}' comes before '{first}'")
    text = textwrap.dedent("\n".join(blank_markers(lines[start - 1 : end])))
    return Section(path, name, start, end, text)


def blank_markers(lines: list[str]) -> list[str]:
    """The lines with every ``# lesson:`` marker made blank (a range spans several sections)."""
    return ["" if MARKER.match(line) else line for line in lines]


def archive_path(path: str) -> str:
    return ARCHIVE_PREFIX + path


def render(section: Section, page_url: str) -> str:
    """The Markdown (with HTML) that replaces one directive."""
    archive = posixpath.relpath(ARCHIVE, posixpath.dirname(page_url.rstrip("/") + "/x") or ".")
    lines = f"Line {section.start}" if section.start == section.end else f"Lines {section.start}–{section.end}"
    source = (
        f'<p class="mha-code__source">{lines} of <code>{html.escape(section.path)}</code> · in the '
        f'<a href="{html.escape(archive)}" download>code download</a> as '
        f"<code>{html.escape(archive_path(section.path))}</code></p>"
    )
    fence = "```" if "```" not in section.text else "~~~~"
    return (
        f'\n<div class="mha-code" data-file="{html.escape(section.path)}" data-section="{section.name}" '
        f'data-start="{section.start}" data-end="{section.end}" markdown>\n'
        f"{source}\n\n"
        f'{fence}python linenums="{section.start}"\n{section.text}\n{fence}\n\n'
        "</div>\n"
    )


def expand(markdown: str, page_url: str, where: str = "?") -> str:
    def one(m: re.Match) -> str:
        try:
            block = render(read_section(m.group("path"), m.group("name")), page_url)
        except SnippetError as exc:
            raise PluginError(f"{where}: {exc}") from None
        indent = m.group("indent")
        return "\n".join(indent + line if line.strip() else line for line in block.split("\n"))

    return DIRECTIVE.sub(one, markdown)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if "::code::" not in markdown:
        return markdown
    return expand(markdown, page.url, page.file.src_uri)
