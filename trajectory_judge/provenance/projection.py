"""A numbers-only projection of the published release, small and safe enough to commit.

The release's verdicts carry free text (each judge's rationale) that this repository does not
redistribute. The projection keeps everything else of every verdict, byte for byte: the same
lines in the same order, the same fields in the same order, every number spelled as the source
spells it, and ``rationale`` set to ``null``. The release's run settings (``run.json``) hold only
numbers and identifiers and are kept as they are. Beside them go a README saying where the data
came from and how to rebuild it, the release's licence, and a checksum manifest.

Everything written is a pure function of the verified source files, so regenerating the
projection gives byte-identical files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from trajectory_judge.fileio import atomic_write_text
from trajectory_judge.models import DataError, Verdict
from trajectory_judge.provenance.manifest import MANIFEST, manifest_text
from trajectory_judge.provenance.outputs import guard_output
from trajectory_judge.provenance.release import RELEASE_COMMIT, RELEASE_SHA256, RELEASE_URL, ReleaseError, sha256_file

VERDICTS = "verdicts.jsonl"
RUN = "run.json"
SETTINGS = "run-settings.jsonl"
"""The projection of ``run.json``: one line per run, its numbers and the model and judge names only."""
TRAJECTORIES = "trajectories.jsonl"
ORDER = "order.txt"
"""The release's trajectory ids, one a line, in the order of its trajectories file (the bootstrap resamples in that order)."""
PROJECTED_FILES: tuple[str, ...] = (VERDICTS, SETTINGS, ORDER, "README.md", "LICENSE")
"""The files :func:`project_release` writes (and lists in the manifest), besides the manifest."""

WITHHELD_FIELDS: tuple[str, ...] = ("rationale",)
"""Verdict fields whose text is withheld: kept as keys, set to ``null``."""

COPYRIGHT = "Copyright (c) 2026 Hadi Mohammadi"
"""The release's copyright line (see :data:`COPYRIGHT_SOURCE` for where it was taken from)."""

COPYRIGHT_SOURCE = """\
Where that line comes from: the release's README says only that the release is MIT licensed and
points to its LICENSE file, which is not among the files we hold. The holder and year are
therefore taken from the paper (`paper.md` of the reference material): it is cited as
Mohammadi et al. (arXiv:2609.00038, 2026), its code and data live under the GitHub account
`mohammadi-hadi`, and its reference list gives the name in full, Hadi Mohammadi, as first author
of the earlier work the paper builds on. If the release's LICENSE names a different holder or
year, its line takes precedence: change `COPYRIGHT` in `trajectory_judge/provenance/projection.py` and
regenerate.
"""

_MIT_PERMISSION = """\
Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
"""

_IDENTIFIER = re.compile(r"[A-Za-z0-9_.:,@/+\-]*")
"""A string value allowed into the projection unchanged: an id, a model tag, a comma list of ids."""


class _Number(float):
    """A parsed JSON number that remembers how the source spelled it."""

    text: str

    def __new__(cls, text: str) -> _Number:
        obj = super().__new__(cls, text)
        obj.text = text
        return obj


def _loads(line: str) -> Any:
    return json.loads(line, parse_float=_Number, parse_int=_Number)


def _encode(value: Any) -> str:
    """Compact JSON of ``value`` with every number in its source spelling, keys in their order."""
    if isinstance(value, _Number):
        return value.text
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + _encode(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_encode(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _plain(value: Any) -> Any:
    """``value`` with source-spelled numbers turned back into ``int`` / ``float``."""
    if isinstance(value, _Number):
        f = float(value)
        return int(value.text) if re.fullmatch(r"-?\d+", value.text) else f
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _verified_source(release_dir: Path, name: str) -> Path:
    path = release_dir / name
    if not path.is_file():
        raise ReleaseError(f"{path}: not found; run `trajectory-judge fetch-release` or set TJ_RELEASE_DIR")
    got = sha256_file(path)
    if got != RELEASE_SHA256[name]:
        raise ReleaseError(f"{path}: sha256 {got} is not the pinned {RELEASE_SHA256[name]}; refusing to project it")
    return path


def project_verdict_line(line: str, path: Path | str = VERDICTS, lineno: int = 0) -> str:
    """One release verdict line -> its projection (no newline): the withheld fields set to ``null``."""
    try:
        record = _loads(line)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(record, dict):
        raise DataError(f"{path}:{lineno}: expected a JSON object")
    for name in WITHHELD_FIELDS:
        if name in record:
            record[name] = None
    plain = _plain(record)
    try:
        Verdict.model_validate(plain)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "record"
        raise DataError(f"{path}:{lineno}: invalid Verdict: {where}: {err['msg']}") from None
    return _encode(record)


def project_verdicts(text: str, path: Path | str = VERDICTS) -> str:
    """A whole ``verdicts.jsonl`` text -> the projected text, line for line."""
    out = [project_verdict_line(ln, path, i) for i, ln in enumerate(text.split("\n"), 1) if ln.strip()]
    return "".join(ln + "\n" for ln in out)


def project_run(text: str, path: Path | str = RUN) -> str:
    """``run.json`` -> one JSON line per run with its numbers, model and judges (a string that is not
    an identifier is refused); nothing of the source's layout is copied."""

    def check(value: Any, where: str) -> None:
        if isinstance(value, str) and not _IDENTIFIER.fullmatch(value):
            raise DataError(f"{path}: {where} is free text, not a number or identifier; it is not projected")
        if isinstance(value, dict):
            for k, v in value.items():
                check(v, f"{where}.{k}")
        if isinstance(value, list):
            for i, v in enumerate(value):
                check(v, f"{where}[{i}]")

    try:
        settings = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: not valid JSON ({exc.msg})") from None
    check(settings, "run")
    keep = ("model", "judges")  # identifiers; every other field kept only when it is a number
    rows = [
        {k: v for k, v in sorted(run.items()) if k in keep or (isinstance(v, (int, float)) and not isinstance(v, bool))}
        for run in settings.get("runs", [])
    ]
    return "".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in rows)


def project_order(text: str, path: Path | str = TRAJECTORIES) -> str:
    """The release's trajectories file -> its trajectory ids, one a line, in file order (nothing else)."""
    ids = []
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            tid = json.loads(line)["trajectory_id"]
        except (ValueError, KeyError, TypeError) as exc:
            raise DataError(f"{path}:{lineno}: not a trajectory record ({exc})") from None
        if not isinstance(tid, str) or not _IDENTIFIER.fullmatch(tid):
            raise DataError(f"{path}:{lineno}: trajectory_id is not an identifier")
        ids.append(tid)
    return "".join(f"{i}\n" for i in ids)


def readme_text() -> str:
    """The projection's README (our words; every fact in it comes from :mod:`trajectory_judge.provenance.release`)."""
    src = f"{RELEASE_URL}/{VERDICTS}"
    run = f"{RELEASE_URL}/{RUN}"
    traj = f"{RELEASE_URL}/{TRAJECTORIES}"
    withheld = ", ".join(f"`{f}`" for f in WITHHELD_FIELDS)
    return f"""\
# The published release's verdicts, numbers only

Generated by `trajectory_judge.provenance.projection`; do not edit by hand.

These files carry the verdicts of the paper's five judges on its 400 trajectories, as the authors
published them, minus their free text. Together with this repository's own trajectories (same ids,
same labels) they are enough to rebuild every number of the paper's report without downloading
the release.

## Source

| file here | taken from (pinned commit `{RELEASE_COMMIT}`) | sha256 of the source file |
|---|---|---|
| `{VERDICTS}` | <{src}> | `{RELEASE_SHA256[VERDICTS]}` |
| `{RUN}` | <{run}> | `{RELEASE_SHA256[RUN]}` |
| `{ORDER}` | <{traj}> (ids only) | `{RELEASE_SHA256[TRAJECTORIES]}` |

The source is checked against these digests before anything is read from it.

## What was changed

- `{VERDICTS}`: the same records in the same order, each with its fields in the source's order and
  its numbers spelled as in the source. Only {withheld} differs: its value is `null`. That field
  holds each judge's explanation in the authors' own words, which this repository does not
  redistribute; no metric of the paper reads it. Ids, judge ids, flags, steps, failure types,
  confidences, latencies, token counts and error fields are kept unchanged.
- `{SETTINGS}`: from `{RUN}`, one line per run holding its numbers (k, seed, sizes) and the
  model and judge names, nothing else; the source file itself is not copied.
- The release's trajectories are not included: their texts are the authors' prose. This
  repository builds its own trajectories (`trajectory-judge build-dataset --n 400 --seed 7`), with
  the same ids and the same labels; the tests in `tests/test_release_projection.py` check that.
- `{ORDER}`: the trajectory ids of the release's trajectories file, one a line, in its order and
  nothing else. The stratified bootstrap draws trajectories in file order, so the paper's intervals
  come out exactly only when our trajectories are put in this order
  (`trajectory_judge.analysis.core.loading.load_paper_data`).

## Regenerating

```bash
trajectory-judge fetch-release --project data/release
```

This fetches the release into the cache (or uses `TJ_RELEASE_DIR` when the copy there verifies),
checks its digests and rewrites this directory; the result is byte-identical to what is committed.
`trajectory-judge manifest --data data/release --check` verifies the files against `{MANIFEST}`.

## Licence

The release is MIT licensed; `LICENSE` holds its notice, with the copyright line
`{COPYRIGHT}`.

{COPYRIGHT_SOURCE}"""


def license_text() -> str:
    """The MIT licence with the release's copyright line."""
    return f"MIT License\n\n{COPYRIGHT}\n\n{_MIT_PERMISSION}"


def project_release(release_dir: str | Path, out_dir: str | Path) -> Path:
    """Write the projection of the verified release in ``release_dir`` into ``out_dir``; return ``out_dir``.

    Raises :class:`~trajectory_judge.provenance.release.ReleaseError` when a source file is missing or does
    not match its pinned digest, and :class:`~trajectory_judge.models.DataError` when ``out_dir``
    is not a directory or a record is malformed. Nothing is written unless every source verifies.
    """
    release_dir, out = Path(release_dir), Path(out_dir)
    if out.exists() and not out.is_dir():
        raise DataError(f"{out}: exists and is not a directory")
    vpath, rpath, tpath = (_verified_source(release_dir, name) for name in (VERDICTS, RUN, TRAJECTORIES))
    files = {
        VERDICTS: project_verdicts(vpath.read_text(encoding="utf-8"), vpath),
        SETTINGS: project_run(rpath.read_text(encoding="utf-8"), rpath),
        ORDER: project_order(tpath.read_text(encoding="utf-8"), tpath),
        "README.md": readme_text(),
        "LICENSE": license_text(),
    }
    for name in (*files, MANIFEST):
        guard_output(out / name, inputs=[vpath, rpath], own=(VERDICTS, MANIFEST))
    out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        atomic_write_text(out / name, text)
    atomic_write_text(out / MANIFEST, manifest_text(out, PROJECTED_FILES))
    return out
