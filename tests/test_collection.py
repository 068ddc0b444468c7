"""Every test module under tests/ is collected: no folder of ours matches a pattern pytest skips.

pytest's default ``norecursedirs`` holds ``build``, which once left tests/browser/build/ (the
build exercise's page, 22 tests) out of every run, CI's included, without a word.
"""

from __future__ import annotations

from fnmatch import fnmatch
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def skipped(folders: list[Path], patterns: list[str]) -> list[str]:
    return [f"{folder} (matches {p!r})" for folder in folders for p in patterns if fnmatch(folder.name, p)]


def test_no_test_folder_is_skipped_by_norecursedirs(request):
    folders = sorted({p.parent.relative_to(TESTS) for p in TESTS.rglob("test_*.py")})
    found = skipped(folders, request.config.getini("norecursedirs"))
    assert not found, f"pytest would not look for tests in: {found}; change norecursedirs in pyproject.toml"
    # the check itself: pytest's default list would skip the build exercise's folder
    assert skipped([Path("browser/build")], ["*.egg", ".*", "build", "dist"])
