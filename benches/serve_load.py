"""Load on `zamburak mcp serve`: CLIENTS callers share ONE stdio session of one server (the official MCP
Python SDK, pinned in tests/serve/requirements.txt), each with its own `run_plan` requests in flight, RUNS runs
in all over a copy of the example world: plans that complete, are denied, wait for the person, fail, and
crash their worker (memory). It reports per-run latency (p50/p99, as the client sees it), the server's RSS
over time (start, peak, end), and then checks, failing (exit 1) only on correctness, never on timing:

* no lost record: every run answered, one run directory each, every trace verifies with `zamburak verify`
  (exit 0, or 4 for a run waiting for the person);
* no orphan: every process under the server while it served (pool and run workers) is gone after the
  session closes, and the server exited 0.

    tests/serve/.venv/bin/python benches/serve_load.py ZAMBURAK [--clients 20] [--runs 1000]
        [--warm-workers N] [--max-runs N] [--out FILE.md] [--repeat-latency N]

`tests/cli/serve.rs` runs a small version (2 clients, 40 runs); benches/results/serve-load.md has the numbers of
the full one.
"""

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent

PLANS = {
    "completed": 'print("hello")\n',
    "completed_tool": 't = read_file(path="todo.txt")\nprint("read it")\n',
    "denied": 'k = read_file(path="secrets/api_key.txt")\nsend_email(to="me@example.com", subject="k", body=k)\n',
    "suspended": 'm = read_inbox(limit=1)\nsend_email(to=m[0]["from"], subject="re", body="ok")\n',
    "exception": "x = 1 // 0\n",
    "crash_memory": 'x = "a" * 1000000\ns = "".join([x] * 100000)\nprint(len(s))\n',
}
# Ten runs in a row: four complete, two are denied, two wait for the person, one raises, one crashes.
MIX = ["completed", "completed_tool", "denied", "suspended", "completed", "exception", "completed_tool",
       "denied", "suspended", "crash_memory"]
# What the model is told: a run that reads the user's data is cut after the read (docs/serve.md, "What the
# planner can learn"); how it really ended is checked in its trace (ENDED).
EXPECTED = {
    "completed": "completed",
    "completed_tool": "for_the_person",
    "denied": "denied",
    "suspended": "for_the_person",
    "exception": "error",
    "crash_memory": "error",
}
# The last record of each run's trace, and its status where it is an `end`.
ENDED = {
    "completed": ("end", "completed"),
    "completed_tool": ("end", "completed"),
    "denied": ("end", "denied"),
    "suspended": ("suspend", None),
    "exception": ("end", "error"),
    "crash_memory": ("end", "error"),
}


def make_world(dest: Path) -> Path:
    """A copy of the example world with the default policy pointing at it (as tests/common/world.rs)."""
    shutil.copytree(ROOT / "examples/mail", dest / "mail")
    shutil.copytree(ROOT / "examples/files", dest / "files")
    for p in dest.rglob("*"):
        if p.suffix in (".zjson", ".zsnap", ".zvalues"):
            p.unlink()
    policy = (ROOT / "policies/default.yaml").read_text()
    for a, b in [("../examples/mail/inbox", "mail/inbox"), ("../examples/out/outbox", "out/outbox"),
                 ("../examples/out/drafts", "out/drafts"), ("../examples/files", "files"),
                 ('"http://127.0.0.1"', '"http://127.0.0.1:9/"')]:
        policy = policy.replace(a, b)
    (dest / "policy.yaml").write_text(policy)
    return dest


def stat_of(pid: int):
    """(ppid, start time) of a live, non-zombie process, else None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    if fields[0] == "Z":
        return None
    return int(fields[1]), fields[19]


def descendants(root: int) -> dict:
    """Every live process under `root`: pid -> start time (to tell a reused pid)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = stat_of(int(entry))
            if st:
                parents[int(entry)] = st
    found, frontier = {}, [root]
    while frontier:
        p = frontier.pop()
        for pid, (ppid, start) in parents.items():
            if ppid == p and pid not in found:
                found[pid] = start
                frontier.append(pid)
    return found


def server_pid() -> int:
    """The `zamburak mcp serve` the SDK started: a child of this process."""
    for pid in descendants(os.getpid()):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in cmd and b"mcp" in cmd:
            return pid
    raise SystemExit("FAIL: the server process was not found")


def rss_kib(pid: int):
    try:
        m = re.search(r"VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    except OSError:
        return None
    return int(m.group(1)) if m else None


class Sampler(threading.Thread):
    def __init__(self, pid: int, every: float = 0.1):
        super().__init__(daemon=True)
        self.pid, self.every, self.samples, self.stop = pid, every, [], threading.Event()
        self.started = time.monotonic()

    def run(self):
        while not self.stop.is_set():
            r = rss_kib(self.pid)
            if r is not None:
                self.samples.append((time.monotonic() - self.started, r))
            self.stop.wait(self.every)


def biggest_mappings(pid: int, n: int = 12):
    """The server's mappings holding the most resident memory: (RSS KiB, size KiB, name)."""
    maps, cur = [], None
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        parts = line.split()
        if "-" in parts[0] and not parts[0].endswith(":"):
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            cur = [0, (hi - lo) // 1024, parts[5] if len(parts) > 5 else "[anon]"]
            maps.append(cur)
        elif parts[0] == "Rss:" and cur is not None:
            cur[0] = int(parts[1])
    return sorted(maps, reverse=True)[:n]


def pct(values, p):
    s = sorted(values)
    if not s:
        return float("nan")
    k = min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))
    return s[k]


async def caller(client, jobs: asyncio.Queue, results: list):
    while True:
        try:
            i = jobs.get_nowait()
        except asyncio.QueueEmpty:
            return
        kind = MIX[i % len(MIX)]
        t0 = time.perf_counter()
        r = await client.call_tool("run_plan", {"plan": PLANS[kind]})
        dt = time.perf_counter() - t0
        doc = r.structured_content or {}
        results.append({"i": i, "kind": kind, "ms": dt * 1000, "status": doc.get("status"),
                        "run": doc.get("run"), "is_error": r.is_error,
                        "error": (doc.get("error") or {}).get("type")})


async def serve_and_load(args, zamburak: str, world: Path):
    runs = world / "runs"
    extra = []
    if args.warm_workers is not None:
        extra += ["--warm-workers", str(args.warm_workers)]
    if args.max_runs is not None:
        extra += ["--max-runs", str(args.max_runs)]
    env = None
    if args.server_env:
        from mcp.client.stdio import get_default_environment
        env = {**get_default_environment(), **dict(kv.split("=", 1) for kv in args.server_env)}
    params = StdioServerParameters(
        command=zamburak,
        args=["mcp", "serve", "--policy", str(world / "policy.yaml"), "--runs", str(runs)] + extra,
        cwd=str(world),
        env=env,
    )
    out = {}
    async with Client(params) as client:
        pid = server_pid()
        out["pid"] = pid
        # One run first, so the server is warm (its pool filled) before the clock starts.
        await client.call_tool("run_plan", {"plan": PLANS["completed"]})
        await asyncio.sleep(0.5)
        if args.repeat_latency:
            seq = []
            for _ in range(args.repeat_latency):
                t0 = time.perf_counter()
                await client.call_tool("run_plan", {"plan": PLANS["completed"]})
                seq.append((time.perf_counter() - t0) * 1000)
                # Room for the pool to refill between runs, as between a model's turns.
                await asyncio.sleep(0.05)
            out["sequential_ms"] = seq
        sampler = Sampler(pid)
        sampler.start()
        jobs = asyncio.Queue()
        for i in range(args.runs):
            jobs.put_nowait(i)
        results = []
        t0 = time.perf_counter()
        await asyncio.gather(*(caller(client, jobs, results) for _ in range(args.clients)))
        out["wall_s"] = time.perf_counter() - t0
        await asyncio.sleep(0.5)
        sampler.stop.set()
        sampler.join()
        out["rss"] = sampler.samples
        out["results"] = results
        if args.smaps:
            out["smaps"] = biggest_mappings(pid)
        # Everything under the server now, to check it is gone once the session closes.
        out["tree"] = descendants(pid)
    # The SDK closed stdin and waited for the server.
    deadline = time.monotonic() + 10
    while stat_of(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    out["server_gone"] = stat_of(pid) is None
    await asyncio.sleep(0.2)
    out["orphans"] = [p for p, start in out["tree"].items() if (st := stat_of(p)) and st[1] == start]
    return out


def verify_all(zamburak: str, runs: Path, results: list) -> list:
    problems = []
    ids = [r["run"] for r in results]
    if None in ids:
        problems.append(f"{ids.count(None)} answer(s) without a run id")
    if len(set(ids)) != len(ids):
        problems.append("two answers name the same run")
    dirs = sorted(p for p in runs.iterdir() if p.is_dir())
    # The warm-up run and the sequential ones are runs too.
    for d in dirs:
        trace = d / "plan.zjson"
        if not trace.is_file():
            problems.append(f"{d.name}: no trace")
            continue
        v = subprocess.run([zamburak, "verify", str(trace)], capture_output=True, text=True)
        if v.returncode not in (0, 4):
            problems.append(f"{d.name}: verify exit {v.returncode}: {v.stdout[-300:]} {v.stderr[-300:]}")
    for r in results:
        if r["status"] != EXPECTED[r["kind"]]:
            problems.append(f"run {r['run']} ({r['kind']}): status {r['status']}, error {r['error']}")
            continue
        trace = runs / str(r["run"]) / "plan.zjson"
        try:
            last = json.loads(trace.read_text().splitlines()[-1])
        except (OSError, ValueError, IndexError) as e:
            problems.append(f"run {r['run']} ({r['kind']}): its trace cannot be read: {e}")
            continue
        kind, status = ENDED[r["kind"]]
        if last.get("type") != kind or (status is not None and last.get("status") != status):
            problems.append(f"run {r['run']} ({r['kind']}): its trace ends {last.get('type')} {last.get('status')}")
    return problems, len(dirs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("zamburak")
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--warm-workers", type=int)
    ap.add_argument("--max-runs", type=int)
    ap.add_argument("--repeat-latency", type=int, default=0,
                    help="first, this many runs one at a time (the per-run latency of a single caller)")
    ap.add_argument("--out", help="write the report (markdown) here")
    ap.add_argument("--keep", action="store_true", help="keep the world and its runs")
    ap.add_argument("--server-env", action="append", help="K=V in the server's environment (repeatable)")
    ap.add_argument("--smaps", action="store_true", help="report the server's biggest mappings at the end")
    args = ap.parse_args()
    zamburak = str(Path(args.zamburak).resolve())
    tmp = Path(tempfile.mkdtemp(prefix="zamburak-serve-load-"))
    world = make_world(tmp)
    out = asyncio.run(serve_and_load(args, zamburak, world))
    problems, n_dirs = verify_all(zamburak, world / "runs", out["results"])
    if not out["server_gone"]:
        problems.append("the server did not exit after the session closed")
    if out["orphans"]:
        problems.append(f"orphans after the session closed: {out['orphans']}")
    lat = [r["ms"] for r in out["results"]]
    by_kind = {}
    for r in out["results"]:
        by_kind.setdefault(r["kind"], []).append(r["ms"])
    rss = [kib for _, kib in out["rss"]]
    report = {
        "clients": args.clients,
        "runs": args.runs,
        "warm_workers": args.warm_workers,
        "max_runs": args.max_runs,
        "wall_s": round(out["wall_s"], 2),
        "runs_per_s": round(args.runs / out["wall_s"], 1),
        "p50_ms": round(pct(lat, 50), 1),
        "p99_ms": round(pct(lat, 99), 1),
        "by_kind": {k: {"n": len(v), "p50_ms": round(pct(v, 50), 1), "p99_ms": round(pct(v, 99), 1)}
                    for k, v in sorted(by_kind.items())},
        "rss_kib": {"start": rss[0] if rss else None, "peak": max(rss) if rss else None,
                    "end": rss[-1] if rss else None, "samples": len(rss)},
        "run_dirs": n_dirs,
        "processes_under_server": len(out["tree"]),
        "orphans": len(out["orphans"]),
        "problems": problems[:20],
    }
    if "smaps" in out:
        report["biggest_mappings_kib"] = out["smaps"]
    if "sequential_ms" in out:
        s = out["sequential_ms"]
        report["sequential"] = {"n": len(s), "p50_ms": round(statistics.median(s), 2),
                                "p99_ms": round(pct(s, 99), 2), "min_ms": round(min(s), 2)}
    print(json.dumps(report, indent=2))
    if args.out:
        write_markdown(Path(args.out), report, out["rss"])
    if args.keep:
        print(f"world kept in {tmp}", file=sys.stderr)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    if problems:
        print("FAIL: " + "; ".join(problems[:20]), file=sys.stderr)
        sys.exit(1)
    print("serve load: no lost record, no orphan")


def write_markdown(path: Path, r: dict, samples: list):
    # A coarse RSS curve: ten points over the load.
    curve = []
    if samples:
        step = max(1, len(samples) // 10)
        curve = [f"{t:.1f} s: {kib / 1024:.1f} MiB" for t, kib in samples[::step]]
    lines = [
        f"# `mcp serve` under load ({r['clients']} callers, {r['runs']} runs)",
        "",
        "Written by `benches/serve_load.py` (see its preamble and docs/serve.md, \"Running it\"). One server, one stdio",
        f"session, {r['clients']} callers with a request each in flight; warm workers: "
        f"{r['warm_workers'] if r['warm_workers'] is not None else 'default'}, concurrent runs: "
        f"{r['max_runs'] if r['max_runs'] is not None else 'default'}. Debug build, 2-core machine shared with other builds:",
        "the numbers are indicative, and the bench never fails on them.",
        "",
        "| | |",
        "| --- | --- |",
        f"| wall time | {r['wall_s']} s ({r['runs_per_s']} runs/s) |",
        f"| latency per run, p50 / p99 | {r['p50_ms']} ms / {r['p99_ms']} ms |",
        f"| server RSS start / peak / end | {fmt_kib(r['rss_kib']['start'])} / {fmt_kib(r['rss_kib']['peak'])} / "
        f"{fmt_kib(r['rss_kib']['end'])} ({r['rss_kib']['samples']} samples) |",
        f"| run directories, every trace verified | {r['run_dirs']} |",
        f"| processes under the server at the end / orphans after it exited | {r['processes_under_server']} / {r['orphans']} |",
        f"| problems | {len(r['problems'])} |",
        "",
        "| plan | runs | p50 | p99 |",
        "| --- | --- | --- | --- |",
    ]
    for k, v in r["by_kind"].items():
        lines.append(f"| {k} | {v['n']} | {v['p50_ms']} ms | {v['p99_ms']} ms |")
    if "sequential" in r:
        s = r["sequential"]
        lines += ["", f"One caller, {s['n']} runs of `print(\"hello\")` one at a time: p50 {s['p50_ms']} ms, "
                      f"p99 {s['p99_ms']} ms, min {s['min_ms']} ms."]
    if curve:
        lines += ["", "Server RSS over the load: " + "; ".join(curve) + "."]
    lines += [
        "",
        "Reading it. Latency is what a caller waits for its answer, the wait for one of the `--max-runs` slots",
        "included: with more callers than slots on two busy cores it is mostly queueing, and the memory-crashing",
        "plans (each allocates up to the policy's 512 MiB before its worker is stopped) take the most CPU. The",
        "server's RSS rises while the first runs overlap, then stays near that level: what it holds at the peak",
        "is the runs under way, chiefly the paused interpreter state of the runs that wait for the person (several",
        "MiB of JSON each, parsed to save the snapshot), and glibc keeps freed memory in its per-thread arenas",
        "(at most eight per core) rather than return it. heaptrack over 100 runs of this mix: 92 MiB peak heap,",
        "49 KiB not freed at exit (no leak); with `MALLOC_ARENA_MAX=1` in the server's environment the same",
        "200-run load peaked at 123 MiB instead of 238 MiB.",
    ]
    path.write_text("\n".join(lines) + "\n")


def fmt_kib(k):
    return "-" if k is None else f"{k / 1024:.1f} MiB"


if __name__ == "__main__":
    main()
