"""Measure prompt-caching modes of a running llama-server: speed and byte-identical repeats.

    .venv/bin/python tests/benchmarks/bench_llm_server.py --n 5 --out /tmp/bench_cache.json

For each mode (off: no reuse; prefix: the view's saved prefix restored before every request;
on: whatever the previous request left), judge the first N trajectories with the step view, then
the same N again in reverse order (so under 'on' each repeat follows a different request), and
report seconds per request and whether every repeat was byte-identical.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from trajectory_judge.backends.clients import OpenAIClient
from trajectory_judge.judges.prompts import build_prompt, view_prefix
from trajectory_judge.judges.schema import response_schema
from trajectory_judge.judges.views import VIEWS
from trajectory_judge.models import load_trajectories


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data")
    ap.add_argument("--n", type=int, default=5)
    ap.add_argument("--view", default="step")
    ap.add_argument("--modes", default="off,prefix,on")
    ap.add_argument("--base-url", default="http://127.0.0.1:8080")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    trajs = load_trajectories(Path(a.data) / "trajectories.jsonl")[: a.n]
    prompts = [build_prompt(a.view, t) for t in trajs]
    schema = response_schema(a.view)
    report: dict = {"n": a.n, "view": a.view, "modes": {}}
    for mode in a.modes.split(","):
        kw = {"prefix_slots": [view_prefix(v) for v in VIEWS]} if mode == "prefix" else {"cache_prompt": mode == "on"}
        c = OpenAIClient(a.base_url, "bench", **kw)
        c.server_info()
        first, second, lat, cache_n = {}, {}, [], []
        order = list(range(a.n)) + list(reversed(range(a.n)))
        for k, i in enumerate(order):
            r = c.complete(prompts[i], schema, temperature=0.0, seed=7)
            (first if k < a.n else second)[i] = r.text
            lat.append(r.latency_s)
            cache_n.append(r.extra.get("cache_n"))
            print(
                f"{mode} prompt {i} {r.latency_s:.2f}s prompt_tokens={r.prompt_tokens} "
                f"completion_tokens={r.completion_tokens} cache_n={r.extra.get('cache_n')}",
                file=sys.stderr,
            )
        identical = [first[i] == second[i] for i in range(a.n)]
        report["modes"][mode] = {
            "mean_s": statistics.mean(lat),
            "median_s": statistics.median(lat),
            "latencies_s": [round(x, 3) for x in lat],
            "cache_n": cache_n,
            "repeats_identical": sum(identical),
            "of": a.n,
            "texts": first,
        }
        c.close()
        print(
            f"{mode}: mean {statistics.mean(lat):.2f}s/request, {sum(identical)}/{a.n} repeats byte-identical",
            file=sys.stderr,
        )
    modes = report["modes"]
    if "off" in modes and "prefix" in modes:
        report["prefix_equals_off"] = sum(modes["off"]["texts"][i] == modes["prefix"]["texts"][i] for i in range(a.n))
    text = json.dumps(report, indent=2, sort_keys=True, default=str)
    if a.out:
        Path(a.out).write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
