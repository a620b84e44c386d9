"""Per-run latency of `zamburak mcp serve` with and without warm workers, side by side: two servers (one with
`--warm-workers 0`, where each run starts its worker process, one with the default pool), one run of
`print("hello")` at a time on each in turn, so both see the same load on the machine. Reports p50, p90 and
min per server as the client (the official MCP Python SDK) sees a run. Never fails on timing.

    tests/serve/.venv/bin/python benches/serve_latency.py ZAMBURAK [--runs 200] [--pause-ms 50]
"""

import argparse
import asyncio
import json
import shutil
import statistics
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from serve_load import make_world, pct


async def main(args):
    tmp = Path(tempfile.mkdtemp(prefix="zamburak-serve-latency-"))
    world = make_world(tmp)
    setups = {"cold (--warm-workers 0)": ["--warm-workers", "0"], "warm (default pool)": []}
    times = {name: [] for name in setups}
    async with AsyncExitStack() as stack:
        clients = {}
        for i, (name, extra) in enumerate(setups.items()):
            params = StdioServerParameters(
                command=args.zamburak,
                args=["mcp", "serve", "--policy", str(world / "policy.yaml"), "--runs", str(world / f"runs{i}")]
                + extra,
                cwd=str(world),
            )
            clients[name] = await stack.enter_async_context(Client(params))
        for client in clients.values():
            await client.call_tool("run_plan", {"plan": 'print("warm-up")\n'})
        await asyncio.sleep(0.5)
        for _ in range(args.runs):
            for name, client in clients.items():
                t0 = time.perf_counter()
                r = await client.call_tool("run_plan", {"plan": 'print("hello")\n'})
                times[name].append((time.perf_counter() - t0) * 1000)
                assert r.structured_content["status"] == "completed", r
                # Room for the pool to refill, as between a model's turns.
                await asyncio.sleep(args.pause_ms / 1000)
    shutil.rmtree(tmp, ignore_errors=True)
    report = {name: {"runs": len(t), "p50_ms": round(statistics.median(t), 2), "p90_ms": round(pct(t, 90), 2),
                     "min_ms": round(min(t), 2)} for name, t in times.items()}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("zamburak")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--pause-ms", type=int, default=50)
    a = ap.parse_args()
    a.zamburak = str(Path(a.zamburak).resolve())
    asyncio.run(main(a))
