"""Read TinyStories stories from a local file (or, with a network, from the hub).

Accepted formats:

* ``TinyStories-train.txt``: stories one after another, each followed by a
  line ``<|endoftext|>``.
* JSON Lines: one object per line with a ``text`` field (``.jsonl``/``.json``).

Each story keeps its row number in the source file (0-based, counting every
story the file holds) so that quoted stories can be traced back. The source
file's name and sha256 are recorded with them.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import os
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

SEPARATOR = "<|endoftext|>"
DEFAULT_STORIES = 6000  # the lesson's figure
DATA_ENV = "TINYSTORIES_PATH"
DEFAULT_DATA = (
    Path(__file__).resolve().parent.parent.parent
    / "shared/data/tinystories/TinyStories-train-head.txt"
)

HUB_REPO = "roneneldan/TinyStories"
HUB_FILE = "TinyStories-train.txt"
# The commit that answers for "main" is recorded from the X-Repo-Commit header,
# so a run is pinned after the fact; pass --revision <sha> to pin it beforehand.
HUB_REVISION = "main"
HUB_URL = "https://huggingface.co/datasets/{repo}/resolve/{revision}/{file}"

CREDIT = (
    "TinyStories by Ronen Eldan and Yuanzhi Li (arXiv:2305.07759), "
    "dataset roneneldan/TinyStories, licence CDLA-Sharing-1.0"
)


class DataError(Exception):
    """A data file that cannot be used; the message says what to do."""


@dataclass(frozen=True)
class Story:
    row: int  # row number in the source file
    text: str


@dataclass(frozen=True)
class StorySource:
    file: str
    sha256: str
    stories: list[Story]
    stories_in_file: int
    requested: int
    revision: str | None = None

    @property
    def capped(self) -> bool:
        return len(self.stories) < self.requested

    def describe(self) -> dict:
        return {
            "file": self.file,
            "sha256": self.sha256,
            "revision": self.revision,
            "stories_requested": self.requested,
            "stories_used": len(self.stories),
            "stories_in_file": self.stories_in_file,
            "capped": self.capped,
            "rows": [self.stories[0].row, self.stories[-1].row] if self.stories else [],
            "credit": CREDIT,
        }


_NO_SEPARATOR = (
    f"no story separator '{SEPARATOR}' found: expected the TinyStories-train.txt "
    "format (each story followed by a line <|endoftext|>) or JSON Lines with a 'text' field"
)


def _lines(f, name: str, digest=None):
    """Decoded lines of a binary file, read one at a time (the full file is 1.9 GB)."""
    offset = 0
    for i, raw in enumerate(f):
        if digest is not None:
            digest.update(raw)
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(
                f"{name} is not UTF-8 text (bad byte at offset {offset + exc.start})"
            ) from None
        offset += len(raw)
        yield (line.lstrip("\ufeff") if i == 0 else line).rstrip("\r\n")


def _txt_parts(lines, name: str):
    """Story texts between separator lines; a file cut mid-story keeps its last part."""
    part, separated, content = [], False, False
    for line in lines:
        if line.strip() == SEPARATOR:
            separated = True
            yield "\n".join(part).strip()
            part = []
        else:
            content = content or bool(line.strip())
            part.append(line)
    if not separated:
        raise DataError(
            _NO_SEPARATOR if content else f"{name} is empty: it holds no stories"
        )
    tail = "\n".join(part).strip()
    if tail:
        yield tail


def _jsonl_parts(lines, name: str):
    seen = False
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        seen = True
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(
                f"{name}: line {lineno} is not valid JSON ({exc.msg})"
            ) from None
        if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
            raise DataError(f"{name}: line {lineno} has no string field 'text'")
        yield obj["text"]
    if not seen:
        raise DataError(f"{name} is empty: it holds no stories")


def iter_stories(f, name: str, digest=None):
    """Yield every story text of an open binary file in row order (blank stories as '')."""
    lines = _lines(f, name, digest)
    head = []
    for line in lines:  # peek at the first non-blank line to tell the format
        head.append(line)
        if line.strip():
            break
    jsonl = name.endswith((".jsonl", ".json")) or (
        head and head[-1].lstrip().startswith("{")
    )
    everything = itertools.chain(head, lines)
    yield from (_jsonl_parts if jsonl else _txt_parts)(everything, name)


def parse_stories(raw: bytes, name: str) -> list[str]:
    """Split a file's bytes into story texts (row order kept, blanks kept as '')."""
    return list(iter_stories(io.BytesIO(raw), name))


def load_stories(
    path: str | os.PathLike | None = None, n: int = DEFAULT_STORIES, *, log=print
) -> StorySource:
    """Read the first ``n`` non-empty stories of a local file, streaming it once.

    Only the chosen stories are kept in memory; the rest of the file is still
    read, to count its stories and to hash it.
    """
    if n < 1:
        raise DataError(f"the number of stories must be positive, not {n}")
    path = Path(path or os.environ.get(DATA_ENV) or DEFAULT_DATA)
    if not path.is_file():
        raise DataError(
            f"data file not found: {path}. Pass --data PATH or set {DATA_ENV} "
            "to a TinyStories-train.txt or JSON Lines file"
        )
    digest = hashlib.sha256()
    chosen, total = [], 0
    with open(path, "rb") as f:
        for row, text in enumerate(iter_stories(f, path.name, digest)):
            if text.strip():
                total += 1
                if len(chosen) < n:
                    chosen.append(Story(row, text))
    if not chosen:
        raise DataError(f"{path.name} holds separators but no story text")
    if len(chosen) < n:
        log(
            f"note: {path.name} holds {total} stories, fewer than the {n} requested; using all {total}"
        )
    return StorySource(
        file=path.name,
        sha256=digest.hexdigest(),
        stories=chosen,
        stories_in_file=total,
        requested=n,
    )


def download_from_hub(
    dest: str | os.PathLike,
    n: int = DEFAULT_STORIES,
    revision: str = HUB_REVISION,
    timeout: float = 10.0,
) -> tuple[Path, str]:
    """Stream the hub's TinyStories-train.txt until ``n`` stories are read; save them to ``dest``.

    Returns the saved path and the commit that served the file.
    """
    url = HUB_URL.format(repo=HUB_REPO, revision=revision, file=HUB_FILE)
    try:
        response = urllib.request.urlopen(url, timeout=timeout)
    except urllib.error.HTTPError as exc:
        raise DataError(
            f"the dataset hub answered HTTP {exc.code} {exc.reason} for {url}; pass a local file with --data PATH "
            f"or {DATA_ENV}=PATH (the TinyStories-train.txt format), or another --revision"
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DataError(
            f"cannot reach the dataset hub ({reason}); offline, pass a local file with --data PATH "
            f"or {DATA_ENV}=PATH (the TinyStories-train.txt format)"
        ) from None
    commit = response.headers.get("X-Repo-Commit") or revision
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(dest.suffix + ".part")
    seen = 0
    from tqdm import tqdm

    with (
        response,
        open(tmp, "wb") as out,
        tqdm(total=n, unit="story", desc="download") as bar,
    ):
        for line in response:
            out.write(line)
            if line.strip() == SEPARATOR.encode():
                seen += 1
                bar.update(1)
                if seen >= n:
                    break
    os.replace(tmp, dest)
    return dest, commit


if __name__ == "__main__":  # a quick look at a file: python -m export.data PATH
    try:
        src = load_stories(sys.argv[1] if len(sys.argv) > 1 else None)
    except DataError as exc:
        sys.exit(f"error: {exc}")
    print(json.dumps(src.describe(), indent=2))
