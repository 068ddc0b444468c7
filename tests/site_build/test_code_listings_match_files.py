"""The code on the lesson pages is the project's code, line for line.

Every ``div.mha-code`` in the built site names a file and a line range
(``data-file``, ``data-start``, ``data-end``; written by
``site_src/hooks/code_snippets.py``). Its code must equal those lines of that
file with their common indentation removed, its line numbers must be the
file's, and its link must lead to the code archive, which holds the same file.
"""

from __future__ import annotations

import html
import importlib.util
import re
import sys
import textwrap
import zipfile
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parents[2]
LESSON_PAGES = {  # built page -> the least number of code blocks it shows
    "lesson/1-why-more-heads/index.html": 1,
    "lesson/2-multihead-operation/index.html": 4,
    "lesson/3-training-examples/index.html": 3,
    "lesson/4-model-training-generation/index.html": 4,
    "lesson/how-measured/index.html": 4,  # the fine print: the split, the tokenizer, selection
}
BLOCK = re.compile(r'<div class="mha-code" (?P<attrs>[^>]*)>(?P<body>.*?)</td></tr></table></div>\s*</div>', re.S)
ATTR = re.compile(r'(data-[\w-]+)="([^"]*)"')
CODE = re.compile(r'<td class="code"><div><pre><span></span><code>(.*?)</code></pre>', re.S)
MARKER = re.compile(r"^[ \t]*# lesson(?::[ \t]*[\w-]+| end)[ \t]*$")
LINENOS = re.compile(r'<span class="normal">\s*(\d+)</span>')
ARCHIVE_LINK = re.compile(
    r'<p class="mha-code__source">.*?<a href="([^"]+)" download>.*?'
    r" as <code>([^<]+)</code></p>",
    re.S,
)


def _hook():
    spec = importlib.util.spec_from_file_location("code_snippets_under_test", ROOT / "site_src/hooks/code_snippets.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def blocks(page_html: str) -> list[dict]:
    out = []
    for m in BLOCK.finditer(page_html):
        attrs = dict(ATTR.findall(m.group("attrs")))
        body = m.group("body")
        code = CODE.search(body)
        link = ARCHIVE_LINK.search(body)
        out.append(
            {
                **attrs,
                "code": _text(code.group(1)).rstrip("\n") if code else None,
                "linenos": [int(n) for n in LINENOS.findall(body)],
                "href": link.group(1) if link else None,
                "archived": link.group(2) if link else None,
            }
        )
    return out


def mismatch(block: dict, root: Path = ROOT) -> str | None:
    """Why a block is not lines start..end of its file (de-indented), or None when it is."""
    file = root / block["data-file"]
    if not file.is_file():
        return f"{block['data-file']} does not exist"
    start, end = int(block["data-start"]), int(block["data-end"])
    lines = file.read_text(encoding="utf-8").splitlines()
    if not 1 <= start <= end <= len(lines):
        return f"lines {start}-{end} are outside {block['data-file']} ({len(lines)} lines)"
    # A range over several sections shows its inner "# lesson:" marker lines blank (code_snippets.blank_markers).
    shown_lines = ["" if MARKER.match(line) else line for line in lines[start - 1 : end]]
    expected = textwrap.dedent("\n".join(shown_lines))
    if block["code"] != expected:
        shown, want = (block["code"] or "").splitlines(), expected.splitlines()
        for k, (a, b) in enumerate(zip(shown, want)):
            if a != b:
                return f"{block['data-file']} line {start + k}: page shows {a!r}, file has {b!r}"
        return f"{block['data-file']}: page shows {len(shown)} lines, lines {start}-{end} are {len(want)}"
    if block["linenos"] != list(range(start, end + 1)):
        return f"{block['data-file']}: line numbers {block['linenos'][:3]}... are not {start}..{end}"
    return None


@pytest.fixture(scope="module")
def site_blocks(built_site):
    return {page: blocks((built_site / page).read_text(encoding="utf-8")) for page in LESSON_PAGES}


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_each_lesson_page_shows_enough_code(site_blocks, page):
    assert len(site_blocks[page]) >= LESSON_PAGES[page], f"{page} shows {len(site_blocks[page])} code blocks"
    assert all(b["code"] is not None for b in site_blocks[page]), f"{page}: a block has no highlighted code"


def test_every_block_is_its_file_line_for_line(site_blocks):
    checked = 0
    for page, found in site_blocks.items():
        for block in found:
            problem = mismatch(block)
            assert problem is None, f"{page}: {problem}"
            checked += 1
    assert checked >= sum(LESSON_PAGES.values())


def test_the_check_fails_for_an_edited_block(site_blocks):
    block = dict(site_blocks["lesson/4-model-training-generation/index.html"][0])
    assert mismatch(block) is None
    lines = block["code"].splitlines()
    edited = {**block, "code": "\n".join([*lines[:-1], lines[-1] + "  # edited"])}
    assert "page shows" in mismatch(edited)
    shifted = {**block, "data-start": str(int(block["data-start"]) + 1), "data-end": str(int(block["data-end"]) + 1)}
    assert mismatch(shifted) is not None


def test_the_pages_show_the_model_class_and_each_forward_step(site_blocks):
    shown = {
        (b["data-file"], s) for found in site_blocks.values() for b in found for s in b["data-section"].split("..")
    }
    code = "\n".join(b["code"] for found in site_blocks.values() for b in found)
    assert "class MultiHeadAttentionLM(nn.Module):" in code
    for section in (
        "embed",
        "split-heads",
        "full-heads",
        "full-scores",
        "full-mask",
        "full-softmax",
        "full-messages",
        "full-concat",
        "full-wo",
        "full-residual",
        "full-hidden",
        "full-vocab",
        "forward",
    ):
        assert ("export/multihead.py", section) in shown, section
    for file, section in (
        ("export/models.py", "loss"),
        ("export/train.py", "train-step"),
        ("export/generate.py", "generation-loop"),
        ("export/wordlm.py", "tokenize"),
        ("export/wordlm.py", "encode-tokens"),
        ("export/windows.py", "make-windows"),
        ("export/lesson/worksheet.py", "ws-weights"),
    ):
        assert (file, section) in shown, (file, section)
    page1 = {b["data-file"] for b in site_blocks["lesson/1-why-more-heads/index.html"]}
    assert "export/lesson/worksheet.py" in page1


def test_each_block_links_to_its_file_in_the_archive(built_site, site_blocks):
    archives = {}
    for page, found in site_blocks.items():
        for block in found:
            target = (built_site / PurePosixPath(page).parent / block["href"]).resolve()
            assert target.name == "mha-lesson.zip" and target.is_file(), f"{page}: {block['href']} is not the archive"
            if target not in archives:
                archives[target] = zipfile.ZipFile(target)
            assert block["archived"] == f"mha-lesson/{block['data-file']}"
            with archives[target].open(block["archived"]) as f:
                assert f.read() == (ROOT / block["data-file"]).read_bytes(), block["archived"]


# --- the section rules of the hook, on small files -------------------------

SOURCE = """import math


# lesson: helper
@staticmethod
def helper(x):
    return x + 1


class Model:
    # lesson: forward
    def forward(self, x):
        y = self.a(x)
        # lesson: step-two
        z = y * 2

        w = z + 1
        # lesson end
        return w

    def other(self):
        pass
"""


def test_sections_follow_markers_blocks_and_definitions(tmp_path):
    hook = _hook()
    (tmp_path / "m.py").write_text(SOURCE)
    helper = hook.read_section("m.py", "helper", root=tmp_path)
    assert helper.text == "@staticmethod\ndef helper(x):\n    return x + 1" and (helper.start, helper.end) == (5, 7)
    forward = hook.read_section("m.py", "forward", root=tmp_path)
    assert forward.text == "def forward(self, x):\n    y = self.a(x)"  # stops at the next marker
    step = hook.read_section("m.py", "step-two", root=tmp_path)
    assert step.text == "z = y * 2\n\nw = z + 1" and (step.start, step.end) == (15, 17)
    both = hook.read_section("m.py", "forward..step-two", root=tmp_path)
    assert both.text.splitlines()[0] == "def forward(self, x):" and both.text.endswith("w = z + 1")


def test_a_changed_file_changes_the_block(tmp_path):
    hook = _hook()
    (tmp_path / "m.py").write_text(SOURCE)
    before = hook.render(hook.read_section("m.py", "step-two", root=tmp_path), "lesson/page/")
    (tmp_path / "m.py").write_text(SOURCE.replace("z = y * 2", "z = y * 3"))
    after = hook.render(hook.read_section("m.py", "step-two", root=tmp_path), "lesson/page/")
    assert "y * 2" in before and "y * 3" in after
    assert 'href="../../downloads/mha-lesson.zip"' in after


@pytest.mark.parametrize("name, message", [("missing", "no section marker"), ("dup", "marks section 'dup' 2 times")])
def test_bad_sections_are_named(tmp_path, name, message):
    hook = _hook()
    (tmp_path / "m.py").write_text("# lesson: dup\nx = 1\n# lesson: dup\ny = 2\n")
    with pytest.raises(hook.SnippetError, match=message):
        hook.read_section("m.py", name, root=tmp_path)
    with pytest.raises(hook.SnippetError, match="no file"):
        hook.read_section("../outside.py", "x", root=tmp_path)
