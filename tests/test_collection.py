"""Every test module under tests/ is collected: no folder of ours matches a pattern pytest skips.

pytest's default ``norecursedirs`` holds ``build``, which once left tests/browser/build/ (the
build exercise's page, 22 tests) out of every run, CI's included, without a word.
"""

from __future__ import annotations

from fnmatch import fnmatch
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_test_folder_is_skipped_by_norecursedirs(request):
    patterns = request.config.getini("norecursedirs")
    folders = [p for p in TESTS.rglob("*") if p.is_dir() and "__pycache__" not in p.parts]
    skipped = [
        f"{folder.relative_to(TESTS)} (matches {pattern!r})"
        for folder in folders
        if any(folder.glob("test_*.py"))
        for pattern in patterns
        if fnmatch(folder.name, pattern)
    ]
    assert not skipped, f"pytest would not look for tests in: {skipped}; change norecursedirs in pyproject.toml"
    assert any(fnmatch("build", p) for p in ["build", *patterns])  # the check sees a skipped folder name
