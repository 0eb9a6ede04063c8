"""SHA-256 digests of files: plain, and cached beside large files (model weights)."""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file, cached next to it in ``.<name>.sha256`` keyed by size and mtime."""
    path = Path(path)
    st = path.stat()
    cache = path.with_name(f".{path.name}.sha256")
    key = f"{st.st_size}:{st.st_mtime_ns}"
    try:
        cached = json.loads(cache.read_text())
        if cached.get("key") == key:
            return str(cached["sha256"])
    except (OSError, ValueError, KeyError):
        pass
    digest = sha256_file(path)
    with contextlib.suppress(OSError):
        cache.write_text(json.dumps({"key": key, "sha256": digest}))
    return digest


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file, read in chunks."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()
