"""Keep one measured time in a JSON object of times: ``python tools/record_time.py FILE KEY SECONDS``.

The rerun checks (``make rerun``) and the book's build (``make book``) write their times to the file
``TJ_RERUN_TIMES`` names; copied to ``book/rerun-times.json``, they are the times the book quotes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python tools/record_time.py FILE KEY SECONDS", file=sys.stderr)
        return 2
    path, key, seconds = Path(argv[0]), argv[1], float(argv[2])
    times = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    times[key] = round(seconds, 1)
    path.write_text(json.dumps(times, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
