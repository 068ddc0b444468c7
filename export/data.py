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
DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared/data/tinystories/TinyStories-train-head.txt"

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


def _split_txt(text: str) -> list[str]:
    if SEPARATOR not in text:
        raise DataError(
            f"no story separator '{SEPARATOR}' found: expected the TinyStories-train.txt "
            "format (each story followed by a line <|endoftext|>) or JSON Lines with a 'text' field"
        )
    parts = text.split(SEPARATOR)
    # A trailing separator leaves an empty tail; a file cut mid-story keeps its last part.
    if parts and not parts[-1].strip():
        parts = parts[:-1]
    return [p.strip() for p in parts]


def _split_jsonl(text: str, name: str) -> list[str]:
    stories = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{name}: line {lineno} is not valid JSON ({exc.msg})") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
            raise DataError(f"{name}: line {lineno} has no string field 'text'")
        stories.append(obj["text"])
    return stories


def parse_stories(raw: bytes, name: str) -> list[str]:
    """Split a file's bytes into story texts (row order kept, blanks kept as '')."""
    if not raw.strip():
        raise DataError(f"{name} is empty: it holds no stories")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{name} is not UTF-8 text (bad byte at offset {exc.start})") from None
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    if name.endswith((".jsonl", ".json")) or text.lstrip().startswith("{"):
        return _split_jsonl(text, name)
    return _split_txt(text)


def load_stories(path: str | os.PathLike | None = None, n: int = DEFAULT_STORIES, *, log=print) -> StorySource:
    """Read the first ``n`` non-empty stories of a local file."""
    if n < 1:
        raise DataError(f"the number of stories must be positive, not {n}")
    path = Path(path or os.environ.get(DATA_ENV) or DEFAULT_DATA)
    if not path.is_file():
        raise DataError(
            f"data file not found: {path}. Pass --data PATH or set {DATA_ENV} "
            "to a TinyStories-train.txt or JSON Lines file"
        )
    raw = path.read_bytes()
    texts = parse_stories(raw, path.name)
    stories = [Story(row, t) for row, t in enumerate(texts) if t.strip()]
    if not stories:
        raise DataError(f"{path.name} holds separators but no story text")
    chosen = stories[:n]
    if len(chosen) < n:
        log(f"note: {path.name} holds {len(stories)} stories, fewer than the {n} requested; using all {len(stories)}")
    return StorySource(
        file=path.name,
        sha256=hashlib.sha256(raw).hexdigest(),
        stories=chosen,
        stories_in_file=len(stories),
        requested=n,
    )


def download_from_hub(dest: str | os.PathLike, n: int = DEFAULT_STORIES, revision: str = HUB_REVISION,
                      timeout: float = 10.0) -> tuple[Path, str]:
    """Stream the hub's TinyStories-train.txt until ``n`` stories are read; save them to ``dest``.

    Returns the saved path and the commit that served the file.
    """
    url = HUB_URL.format(repo=HUB_REPO, revision=revision, file=HUB_FILE)
    try:
        response = urllib.request.urlopen(url, timeout=timeout)
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

    with response, open(tmp, "wb") as out, tqdm(total=n, unit="story", desc="download") as bar:
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
