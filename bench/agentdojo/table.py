#!/usr/bin/env python3
"""Prints the markdown tables of docs/benchmark.md from the runner's SUITE.json files.

Usage: table.py DIR [DIR...]   (each DIR holds banking.json, slack.json, travel.json, workspace.json)"""
import json
import os
import signal
import sys

# Piped into `head`, stop quietly when the reader goes away.
signal.signal(signal.SIGPIPE, signal.SIG_DFL)

SUITES = ["banking", "slack", "travel", "workspace"]


def pct(n, d):
    return f"{100 * n / d:.1f}%" if d else "–"


def table(directory):
    rows = []
    total = {k: 0 for k in ("tasks", "utility", "approved", "completed", "pairs", "uh", "ua", "ah", "aa", "control", "confirm", "deny",
                            "error", "draft", "replayed", "stopped", "missing")}
    for suite in SUITES:
        path = os.path.join(directory, f"{suite}.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            r = json.load(f)
        outcomes = r["outcomes"].get("no_attack", {})
        attack = [r["outcomes"].get(k, {}) for k in ("attack_honest", "attack_adversarial")]
        values = {
            "tasks": r["tasks"], "utility": r["utility"], "approved": r.get("utility_if_approved", 0),
            "pairs": r["pairs"],
            "uh": r["utility_under_attack"]["honest"], "ua": r["utility_under_attack"]["adversarial"],
            "ah": r["attack_success"]["honest"], "aa": r["attack_success"]["adversarial"],
            "control": r["control_attack_success"],
            "completed": outcomes.get("completed", 0), "confirm": outcomes.get("confirm", 0), "deny": outcomes.get("denied", 0),
            "error": outcomes.get("error", 0), "draft": r["decisions"].get("no_attack", {}).get("draft", 0),
            "replayed": r["fooled_agent"]["replayed"], "stopped": r["fooled_agent"]["stopped"],
            "missing": len(r["missing_plans"]),
            "attack_confirm": sum(a.get("confirm", 0) for a in attack),
            "attack_deny": sum(a.get("denied", 0) for a in attack),
            "attack_error": sum(a.get("error", 0) for a in attack),
        }
        rows.append((suite, values))
        for k in total:
            total[k] += values[k]
    print(f"Results in `{directory}`:\n")
    print("| suite | tasks | utility (no attack) | utility if every confirmation is approved | pairs "
          "| utility under attack, honest / adversarial Q-LLM | attack success, honest / adversarial "
          "| control attack success | fooled-agent calls stopped |")
    print("|---|---|---|---|---|---|---|---|---|")
    for suite, v in rows + [("**all**", total)]:
        print(f"| {suite} | {v['tasks']} | {v['utility']} ({pct(v['utility'], v['tasks'])}) "
              f"| {v['approved']} ({pct(v['approved'], v['tasks'])}) | {v['pairs']} "
              f"| {v['uh']} ({pct(v['uh'], v['pairs'])}) / {v['ua']} ({pct(v['ua'], v['pairs'])}) "
              f"| **{v['ah']} / {v['aa']}** | {v['control']} | {v['stopped']} of {v['replayed']} |")
    print()
    print("How the runs without attack ended (a completed run may still miss the task's goal):\n")
    print("| suite | completed | waits for the user's confirmation | denied "
          "| error (a verifier refused, or the model had no answer) |")
    print("|---|---|---|---|---|")
    for suite, v in rows + [("**all**", total)]:
        print(f"| {suite} | {v['completed']} | {v['confirm']} | {v['deny']} | {v['error']} |")
    print()


for d in sys.argv[1:]:
    table(d)
