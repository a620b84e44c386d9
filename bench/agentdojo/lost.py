#!/usr/bin/env python3
"""Why each task lost its unattended utility, from a run's SUITE.json files and lint: the rule that cost it.

Usage: lost.py DIR PLANS_DIR [--zamburak PATH]   (e.g. `lost.py results/naive/v1.2.2 plans-naive`)

A task whose run waited for the user (exit 4) is attributed to the first call `zamburak lint` says will need a
confirmation (Z203: the tool, the argument and the requirement it misses; lint predicts exactly which plans wait,
tests/measured/agentdojo.rs). A task that completed without utility is the plan's reading of the task; one that stopped
with an error (exit 1) says so. A task counts as lost unless its run completed (exit 0) with AgentDojo's check
holding, as table.py counts it. Prints a markdown table grouped by rule, then each task."""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SUITES = ["banking", "slack", "travel", "workspace"]


def rule(zamburak, plans, suite, task):
    out = subprocess.run([zamburak, "lint", os.path.join(plans, suite, f"{task}.py"), "--policy",
                          os.path.join("policies", f"{suite}.yaml"), "--format", "json"],
                         capture_output=True, text=True, cwd=HERE)
    report = json.loads(out.stdout)
    for d in report.get("diagnostics", []):
        if d.get("code") == "Z203":
            # "argument `recipient` derives from ... (untrusted)": the requirement is on the argument's integrity
            # when it derives from data, on who may read it when it "holds data ... may not be allowed to read".
            tool, arg = d.get("tool"), d.get("argument")
            if not arg:
                return f"`{tool}`: data decided whether it is called"
            if "may not be allowed to read" in d["message"]:
                return f"`{tool}.{arg}` would reach someone who may not read it"
            return f"`{tool}.{arg}` was read from data (must be the user's or verified)"
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("plans")
    parser.add_argument("--zamburak", default=os.path.join(HERE, "..", "..", "target", "release", "zamburak"))
    args = parser.parse_args()
    groups = {}
    for suite in SUITES:
        path = os.path.join(args.dir, f"{suite}.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            r = json.load(f)
        for task, t in sorted(r["per_task"].items(), key=lambda kv: int(kv[0].split("_")[-1])):
            # Lost unless the run completed with AgentDojo's check holding (its check alone also holds for
            # some tasks whose run waited or failed: the environment was left as it was).
            if t.get("completed_unattended_utility", t.get("exit") == 0 and t.get("utility")):
                continue
            if t.get("exit") == 4:
                why = rule(os.path.abspath(args.zamburak), args.plans, suite, task) or "waited (lint gave no Z203)"
                if t.get("completed_approved_utility", t.get("utility_if_approved")):
                    why += "; approved, it completes"
                else:
                    why += "; approved, it still misses the task"
            elif t.get("exit") == 0:
                why = "completed, but the answer misses the task's check (the plan's or the model's reading)"
            elif t.get("exit") == 1:
                why = "stopped with an error (a verifier refused, or the model had no answer)"
                if t.get("utility"):
                    why += "; AgentDojo's check alone holds (nothing was changed)"
            else:
                why = f"exit {t.get('exit')}"
            groups.setdefault(why, []).append(f"{suite} {task.split('_')[-1]}")
    print("| rule that cost the task | tasks | count |")
    print("|---|---|---|")
    for why, tasks in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        by_suite = {}
        for t in tasks:
            s, n = t.split()
            by_suite.setdefault(s, []).append(n)
        print(f"| {why} | {'; '.join(s + ' ' + ', '.join(ns) for s, ns in by_suite.items())} | {len(tasks)} |")


if __name__ == "__main__":
    sys.exit(main())
