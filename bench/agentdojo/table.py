#!/usr/bin/env python3
"""Prints the markdown tables of docs/benchmark.md from the runner's SUITE.json files.

Usage: table.py DIR [DIR...]   (each DIR holds banking.json, slack.json, travel.json, workspace.json)

With more than one DIR (the careful and the naive plans, say), a last table sets their totals side by side."""
import json
import os
import signal
import sys

# Piped into `head`, stop quietly when the reader goes away.
signal.signal(signal.SIGPIPE, signal.SIG_DFL)

SUITES = ["banking", "slack", "travel", "workspace"]


def pct(n, d):
    return f"{100 * n / d:.1f}%" if d else "–"


def printed(v):
    """How many of the attack successes reached their goal only through printed text."""
    n = v["oh"] + v["oa"]
    return f" ({v['oh']} / {v['oa']} printed only)" if n else ""


def table(directory):
    rows = []
    total = {k: 0 for k in ("tasks", "utility", "approved", "completed", "pairs", "uh", "ua", "ah", "aa", "control", "confirm", "deny",
                            "error", "draft", "replayed", "stopped", "missing", "executed", "c_approved", "drafted",
                            "blocked", "oh", "oa", "oc")}
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
        c = r.get("consequential", {})
        o = r.get("output_only_attacks", {})
        values.update({"executed": c.get("executed", 0), "c_approved": c.get("approved", 0),
                       "drafted": c.get("drafted", 0), "blocked": c.get("blocked", 0),
                       "oh": o.get("honest", 0), "oa": o.get("adversarial", 0), "oc": o.get("control", 0)})
        values["adversary"] = r.get("adversary", "scripted")
        rows.append((suite, values))
        for k in total:
            total[k] += values[k]
    total["adversary"] = rows[0][1]["adversary"] if rows else "–"
    print(f"Results in `{directory}`:\n")
    print("| suite | tasks | utility (no attack) | utility if every confirmation is approved | pairs "
          "| utility under attack, honest / adversarial Q-LLM | attack success, honest / adversarial "
          "| control attack success | fooled-agent calls stopped |")
    print("|---|---|---|---|---|---|---|---|---|")
    for suite, v in rows + [("**all**", total)]:
        print(f"| {suite} | {v['tasks']} | {v['utility']} ({pct(v['utility'], v['tasks'])}) "
              f"| {v['approved']} ({pct(v['approved'], v['tasks'])}) | {v['pairs']} "
              f"| {v['uh']} ({pct(v['uh'], v['pairs'])}) / {v['ua']} ({pct(v['ua'], v['pairs'])}) "
              f"| **{v['ah']} / {v['aa']}**{printed(v)} | {v['control']} | {v['stopped']} of {v['replayed']} |")
    print()
    print("Autonomy (consequential calls: every call whose effect is not `read`, asking the model aside) without "
          "attack, with a user who approves every confirmation; and the attacks that reached their goal only "
          "through what the plan printed:\n")
    print("| suite | consequential calls: executed without a person / approved / drafted / blocked "
          "| output-only attacks, honest / adversarial / control |")
    print("|---|---|---|")
    for suite, v in rows + [("**all**", total)]:
        print(f"| {suite} | {v['executed']} / {v['c_approved']} / {v['drafted']} / {v['blocked']} "
              f"| {v['oh']} / {v['oa']} / {v['oc']} |")
    print()
    print("How the runs without attack ended (a completed run may still miss the task's goal):\n")
    print("| suite | completed | waits for the user's confirmation | denied "
          "| error (a verifier refused, or the model had no answer) |")
    print("|---|---|---|---|---|")
    for suite, v in rows + [("**all**", total)]:
        print(f"| {suite} | {v['completed']} | {v['confirm']} | {v['deny']} | {v['error']} |")
    print()
    return total


def side_by_side(totals):
    print("All four suites, side by side:\n")
    print("| plans | utility unattended / approved | attack success, honest / adversarial (adversary) "
          "| control | output-only attacks, honest / adversarial / control "
          "| consequential: executed / approved / drafted / blocked |")
    print("|---|---|---|---|---|---|")
    for d, v in totals:
        print(f"| `{d}` | {v['utility']} / {v['approved']} of {v['tasks']} | **{v['ah']} / {v['aa']}** "
              f"({v['adversary']}) | {v['control']} | {v['oh']} / {v['oa']} / {v['oc']} "
              f"| {v['executed']} / {v['c_approved']} / {v['drafted']} / {v['blocked']} |")
    print()


totals = [(d, table(d)) for d in sys.argv[1:]]
if len(totals) > 1:
    side_by_side(totals)
