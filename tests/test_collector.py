"""The collector's pace in the book's processes: imports frozen, full collections rarer, garbage still freed."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from trajectory_judge.book.building.collector import FULL_EVERY


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_a_cycle_of_garbage_made_after_settling_is_still_freed():
    out = _run(
        """
        import gc, weakref
        from trajectory_judge.book.building.collector import settle
        settle()
        class Node: pass
        a, b = Node(), Node()
        a.other, b.other = b, a
        alive = weakref.ref(a)
        del a, b
        kept = [[] for _ in range(10_000)]  # new objects that live on: the collector's own pace frees the cycle
        print(alive() is None, len(kept))
        """
    )
    assert out == "True 10000"


def test_a_chapters_setup_freezes_its_imports_and_collects_the_oldest_generation_rarely():
    out = _run(
        """
        import gc
        from trajectory_judge.book.chapters.page import setup
        before = gc.get_freeze_count()
        setup()
        print(before, gc.get_freeze_count() > 100_000, gc.get_threshold()[2])
        """
    )
    assert out == f"0 True {FULL_EVERY}"
