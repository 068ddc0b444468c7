"""Write files so that a crash never leaves a half-written artefact behind."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def write_text(path: str | os.PathLike, text: str) -> Path:
    return write_bytes(path, text.encode("utf-8"))


def write_json(path: str | os.PathLike, obj, indent: int | None = 1) -> Path:
    return write_text(
        path, json.dumps(obj, indent=indent, ensure_ascii=False, allow_nan=False) + "\n"
    )


def save_torch(path: str | os.PathLike, obj) -> Path:
    import io

    import torch

    buf = io.BytesIO()
    torch.save(obj, buf)
    return write_bytes(path, buf.getvalue())
