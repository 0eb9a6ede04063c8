"""The published release: fetch the authors' raw data at a pinned commit and verify it.

The release itself is never committed into this repository; users fetch it into a cache. Only a
numbers-only projection of its verdicts is committed, in ``data/release/`` (see :mod:`.projection`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import httpx

from trajectory_judge.fileio import atomic_open, user_cache_dir
from trajectory_judge.provenance.checksums import sha256_file

RELEASE_COMMIT = "4a60c595c018b759f2914a159c7b2bc3f0392ff2"


RELEASE_URL = f"https://raw.githubusercontent.com/mohammadi-hadi/trajectory-judge/{RELEASE_COMMIT}/results/raw"


RELEASE_SHA256: dict[str, str] = {
    "trajectories.jsonl": "e3459122dbc1b6ccd2a903bf85fab68ec38e121f2f1326e80ace49c02a4c7986",
    "verdicts.jsonl": "de05ad76b17da958255aa54ed38c8d647cd92c29e71d2ee75962b07302e2b1e6",
    "run.json": "03abcf004b352d61f14b608a451bfab75b1f72a9ddf8802536a10e1acaba8598",
}
"""The three released files and their pinned sha256 digests."""


class ReleaseError(RuntimeError):
    """The release could not be fetched or did not verify."""


def default_dir() -> Path:
    """``TJ_RELEASE_DIR`` if set, else ``$XDG_CACHE_HOME/trajectory-judge/release`` (``~/.cache`` by default)."""
    return user_cache_dir("release", "TJ_RELEASE_DIR")


def verified(directory: str | Path) -> bool:
    """Whether all three files are present in ``directory`` with the pinned digests."""
    d = Path(directory)
    return all((d / n).is_file() and sha256_file(d / n) == h for n, h in RELEASE_SHA256.items())


def _download(client: httpx.Client, url: str, dest: Path, expected: str) -> None:
    try:
        with atomic_open(dest, "wb") as fh, client.stream("GET", url) as resp:
            if resp.status_code != 200:
                raise ReleaseError(f"{url}: HTTP {resp.status_code}")
            h = hashlib.sha256()
            for chunk in resp.iter_bytes():
                h.update(chunk)
                fh.write(chunk)
            if h.hexdigest() != expected:  # raised inside: the temporary file goes, dest is untouched
                raise ReleaseError(
                    f"{url}: checksum mismatch (got sha256 {h.hexdigest()}, pinned {expected}); nothing was kept"
                )
    except httpx.HTTPError as exc:
        raise ReleaseError(f"{url}: could not download ({type(exc).__name__}: {exc}); are you offline?") from None


def fetch_release(directory: str | Path | None = None, *, base_url: str | None = None, timeout: float = 60.0) -> Path:
    """Download the three release files into ``directory`` and verify them; return the directory.

    A copy that already verifies is used as is. Files are written to a temporary name and moved
    into place only after their digest matches, so a failure never leaves a partial or wrong file.
    """
    d = Path(directory) if directory is not None else default_dir()
    d.mkdir(parents=True, exist_ok=True)
    base = (base_url or RELEASE_URL).rstrip("/")
    with httpx.Client(timeout=timeout, follow_redirects=True) as client:
        for name, expected in RELEASE_SHA256.items():
            dest = d / name
            if dest.is_file() and sha256_file(dest) == expected:
                continue
            _download(client, f"{base}/{name}", dest, expected)
    return d
