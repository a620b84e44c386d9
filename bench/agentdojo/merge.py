#!/usr/bin/env python3
"""Merges runs of one suite over disjoint sets of user tasks (`runner.py --user-task …`, run side by side on
their own Q-LLM ports) into the SUITE.json one run over all of them writes.

Usage: merge.py OUT_DIR SHARD_DIR [SHARD_DIR...]   (each SHARD_DIR holds SUITE.json for the same suite)

Counts add up; `per_task` is the union (a task in two shards is an error); the fooled-agent replay, which does
not depend on the user tasks, is taken from the first shard; `seconds` is the longest shard's (the wall time of
the shards run side by side) and `cpu_seconds` their sum."""
import json
import os
import sys


def add(a, b):
    if a is None or b is None:
        return a if b is None else b
    if isinstance(a, dict):
        return {k: add(a.get(k), b.get(k)) if k in a and k in b else (a.get(k) if k in a else b.get(k))
                for k in list(a) + [k for k in b if k not in a]}
    if isinstance(a, list):
        return a + b
    if isinstance(a, bool) or not isinstance(a, (int, float)):
        if a != b:
            raise SystemExit(f"shards disagree: {a!r} and {b!r}")
        return a
    return a + b


def main():
    out, shards = sys.argv[1], sys.argv[2:]
    if not shards:
        sys.exit(__doc__)
    runs = []
    for d in shards:
        [name] = [f for f in os.listdir(d) if f.endswith(".json")]
        with open(os.path.join(d, name)) as f:
            runs.append((name, json.load(f)))
    name, merged = runs[0][0], None
    for n, r in runs:
        if n != name:
            sys.exit(f"{n} is not {name}: one suite at a time")
        if merged is None:
            merged = r
            continue
        clash = set(merged["per_task"]) & set(r["per_task"])
        if clash:
            sys.exit(f"tasks in two shards: {sorted(clash)}")
        fooled, seconds = merged["fooled_agent"], max(merged["seconds"], r["seconds"])
        cpu = merged.get("cpu_seconds", merged["seconds"]) + r["seconds"]
        # Every shard replays the same fooled agent: its tallies (under `outcomes` and `decisions`) are
        # counted once, from the first shard, not once per shard.
        once = {k: merged[k]["fooled_agent"] for k in ("outcomes", "decisions")
                if "fooled_agent" in merged.get(k, {})}
        merged = add({**merged, "fooled_agent": None, "seconds": 0},
                     {**r, "fooled_agent": None, "seconds": 0})
        merged["fooled_agent"], merged["seconds"], merged["cpu_seconds"] = fooled, seconds, round(cpu, 1)
        for k, v in once.items():
            merged[k]["fooled_agent"] = v
    merged["per_task"] = dict(sorted(merged["per_task"].items(), key=lambda kv: int(kv[0].split("_")[-1])))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, name), "w") as f:
        json.dump(merged, f, indent=2)
    print(f"wrote {os.path.join(out, name)} from {len(runs)} shards")


main()
