"""Writers and pinned folders: a command that adds to a data folder names it, and leaves a pinned one alone.

A folder is *pinned* when it holds ``SHA256SUMS`` (:mod:`.manifest`): ``report`` and the book
verify its files against it and refuse them on a checksum mismatch, so one stray append breaks
everything that reads the folder. Every command that adds to a data folder (``run``, ``agent``,
``import-inspect``, ``forget``, ``build-dataset``, ``merge`` into an existing folder, and the inspect tasks whose logs are imported
into one) asks :func:`writable_folder` first, before it creates, locks or opens anything:

- with no folder named it refuses, saying which option names one (there is no default folder);
- a pinned folder is refused, naming the option that writes there all the same (``--force``);
- with that option it writes, and :func:`broken_pins_note` says afterwards which pins no longer
  hold and the command that pins the files as they now are (``trajectory-judge manifest``).
"""

from __future__ import annotations

from pathlib import Path

from trajectory_judge.models import DataError
from trajectory_judge.provenance.checksums import sha256_file
from trajectory_judge.provenance.manifest import DATA_FILES, MANIFEST, read_manifest

OWN_FOLDER = "`trajectory-judge build-dataset --out mine/` makes a folder of your own"
"""How to get a folder to write into: the same 400 trajectories, unpinned."""


def is_pinned(folder: str | Path) -> bool:
    """Whether ``folder`` holds a checksum manifest (``SHA256SUMS``), which readers verify."""
    return (Path(folder) / MANIFEST).exists()


def writable_folder(
    folder: str | Path | None,
    *,
    what: str,
    force: bool,
    option: str = "--data DIR",
    force_option: str = "--force",
) -> Path:
    """``folder`` as a :class:`~pathlib.Path` a writer may write ``what`` into, or :class:`DataError`.

    Refused, before anything is written: no folder (``option`` names the argument that gives one),
    and a pinned folder unless ``force`` (``force_option`` names the argument that sets it).
    """
    if folder is None or not str(folder).strip():
        raise DataError(
            f"{option} is required: it names the folder that {what} go into (no folder is written by default); "
            f"{OWN_FOLDER}; nothing was written"
        )
    d = Path(folder)
    if is_pinned(d) and not force:
        raise pinned_refusal(d, what, force_option)
    return d


def pinned_refusal(folder: str | Path, what: str, force_option: str = "--force") -> DataError:
    """The error that refuses to write ``what`` into the pinned ``folder``, naming ``force_option``."""
    d = Path(folder)
    return DataError(
        f"{d} is pinned by {d / MANIFEST}, which report and the book verify: writing {what} there would "
        f"break its checksums, so nothing was written; {OWN_FOLDER}, or pass {force_option} to write into "
        f"{d} anyway and re-pin it afterwards with `trajectory-judge manifest --data {d}`"
    )


def broken_pins(folder: str | Path) -> list[str]:
    """The files of ``folder`` its manifest no longer pins: listed ones missing or changed, data files unlisted.

    Empty when the folder has no manifest, or every listed file still verifies and every data file is listed.
    """
    d = Path(folder)
    if not is_pinned(d):
        return []
    try:
        listed = read_manifest(d) or {}
    except DataError:
        return [MANIFEST]
    out = [n for n, digest in listed.items() if not (d / n).is_file() or sha256_file(d / n) != digest]
    return out + [n for n in DATA_FILES if n not in listed and (d / n).is_file()]


def broken_pins_note(folder: str | Path) -> str | None:
    """The line a writer run with ``--force`` prints afterwards when pins of ``folder`` no longer hold (else None)."""
    d = Path(folder)
    names = broken_pins(d)
    if not names:
        return None
    return (
        f"trajectory-judge: note: {d / MANIFEST} no longer pins {', '.join(names)} as they are now; report and "
        f"the book check the folder against it, so pin them again with `trajectory-judge manifest --data {d}`"
    )
