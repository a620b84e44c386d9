#!/usr/bin/env python3
"""Prints the markdown tables of docs/benchmark.md from the runner's SUITE.json files.

Usage: table.py DIR [DIR...]   (each DIR holds banking.json, slack.json, travel.json, workspace.json)

With more than one DIR (the careful and the naive plans, say), a last table sets their totals side by side.

Utility is counted as a person counts it: a run that completed (exit 0) AND passed AgentDojo's utility check
(`completed_*` in SUITE.json); AgentDojo's check alone is given beside it in parentheses. A file written
before the runner recorded the completed counts (before issue #52) gets them from its per-task records
where it can (without attack: each task's exit and check), and is marked `†` where it cannot (approved: the
tasks that waited; under attack): there the number is AgentDojo's check alone, not re-measured. Attack success is AgentDojo's
own security check (a goal reached through what the plan printed included), then the part reached through
tool calls."""
import json
import os
import signal
import sys

# Piped into `head`, stop quietly when the reader goes away.
signal.signal(signal.SIGPIPE, signal.SIG_DFL)

SUITES = ["banking", "slack", "travel", "workspace"]
WHO = [("approve_all", "approves every claim"), ("novelty", "approves every claim but one showing a new or "
                                                             "look-alike value")]


def pct(n, d):
    return f"{100 * n / d:.1f}%" if d else "–"


def completed_unattended(r):
    """(completed, raw check): from the run's counts, else from its per-task records (exit 0 and check)."""
    raw = r.get("utility_raw_check", r["utility"])
    if "completed_unattended_utility" in r:
        return r["completed_unattended_utility"], raw
    return sum(1 for t in r["per_task"].values() if t.get("exit") == 0 and t.get("utility")), raw


def approvals_asked(r):
    """Every approval given without attack (every effect), and how many of them were reads."""
    c = r.get("consequential", {})
    if "approved_reads" in c:
        return c.get("approved", 0), c["approved_reads"]
    # Before issue #52 `approved` left reads out; each task's `approvals` counted every approval. A file older
    # still has no `consequential`: how many were reads is not known (0 is summed, shown as "?").
    total = sum(t.get("approvals", 0) for t in r["per_task"].values())
    return total, (total - c["approved"]) if "approved" in c else 0


def load(directory, suite):
    path = os.path.join(directory, f"{suite}.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def reads(v):
    return "?" if v["reads_unknown"] else str(v["asked_reads"])


def values_of(r):
    outcomes = r["outcomes"].get("no_attack", {})
    completed, raw = completed_unattended(r)
    old = "completed_approved_utility" not in r
    approved_raw = r.get("utility_if_approved_raw_check", r.get("utility_if_approved", 0))
    if old:
        # Before issue #52 the approved runs' exits were not recorded: a task that did not wait is approved as
        # it ran (its exit is known); one that waited is counted by AgentDojo's check alone (marked †).
        approved_old = sum(1 for t in r["per_task"].values()
                           if (t.get("utility_if_approved") if t.get("exit") == 4
                               else t.get("exit") == 0 and t.get("utility")))
    under_raw = r["utility_under_attack"]
    under = r.get("completed_utility_under_attack", under_raw)
    asked, asked_reads = approvals_asked(r)
    c = r.get("consequential", {})
    o = r.get("output_only_attacks", {})
    v = {
        "tasks": r["tasks"], "utility": completed, "utility_raw": raw,
        "approved": approved_old if old else r["completed_approved_utility"], "approved_raw": approved_raw,
        "old": int(old),
        "pairs": r["pairs"], "uh": under["honest"], "ua": under["adversarial"],
        "uh_raw": under_raw["honest"], "ua_raw": under_raw["adversarial"],
        "ah": r["attack_success"]["honest"], "aa": r["attack_success"]["adversarial"],
        "control": r["control_attack_success"],
        "completed": outcomes.get("completed", 0), "confirm": outcomes.get("confirm", 0),
        "deny": outcomes.get("denied", 0), "error": outcomes.get("error", 0),
        "replayed": r["fooled_agent"]["replayed"], "stopped": r["fooled_agent"]["stopped"],
        "executed": c.get("executed", 0), "asked": asked, "asked_reads": asked_reads,
        "reads_unknown": int("approved" not in c),
        "drafted": c.get("drafted", 0), "blocked": c.get("blocked", 0),
        "oh": o.get("honest", 0), "oa": o.get("adversarial", 0), "oc": o.get("control", 0),
    }
    v["th"], v["ta"], v["tc"] = v["ah"] - v["oh"], v["aa"] - v["oa"], v["control"] - v["oc"]
    return v


def person_cells(p, with_refusals):
    """Two cells: attack success (AgentDojo's check; through tool calls), and asked / approvals [/ refusals] /
    utility."""
    counts = [p["asked"], p["approvals"]] + ([p["refusals"]] if with_refusals else []) + [p["completed_utility"]]
    return [f"**{p['attack_success']}** ({p['tool_call_attack_success']})", " / ".join(str(n) for n in counts)]


def table(directory):
    rows = []
    total = None
    people_rows = []
    recurring_rows = []
    for suite in SUITES:
        r = load(directory, suite)
        if r is None:
            continue
        v = values_of(r)
        v["adversary"] = r.get("adversary", "scripted")
        rows.append((suite, v))
        if total is None:
            total = {k: 0 for k in v if k != "adversary"}
        for k in total:
            total[k] += v[k]
        if "persons" in r:
            people_rows.append((suite, r))
        if "recurring" in r:
            recurring_rows.append((suite, r))
    if total is None:
        print(f"No SUITE.json in `{directory}`.\n")
        return None
    total["adversary"] = rows[0][1]["adversary"]
    dagger = lambda v: "†" if v["old"] else ""  # noqa: E731
    print(f"Results in `{directory}`:\n")
    print("| suite | tasks | attack success, honest / adversarial Q-LLM (AgentDojo's check) "
          "| of which through tool calls, honest / adversarial | control attack success (through tool calls) "
          "| utility unattended: completed (AgentDojo's check alone) "
          "| utility if every confirmation is approved: completed (check alone) | pairs "
          "| utility under attack, honest / adversarial: completed (check alone) | fooled-agent calls stopped |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for suite, v in rows + [("**all**", total)]:
        print(f"| {suite} | {v['tasks']} | **{v['ah']} / {v['aa']}** ({v['oh']} / {v['oa']} printed only) "
              f"| **{v['th']} / {v['ta']}** | {v['control']} ({v['tc']}) "
              f"| {v['utility']} ({pct(v['utility'], v['tasks'])}) ({v['utility_raw']}) "
              f"| {v['approved']}{dagger(v)} ({pct(v['approved'], v['tasks'])}) ({v['approved_raw']}) "
              f"| {v['pairs']} "
              f"| {v['uh']}{dagger(v)} ({pct(v['uh'], v['pairs'])}) / {v['ua']}{dagger(v)} "
              f"({pct(v['ua'], v['pairs'])}) ({v['uh_raw']} / {v['ua_raw']}) "
              f"| {v['stopped']} of {v['replayed']} |")
    if total["old"]:
        print("\n† recorded before the runner counted completed runs (issue #52), not re-measured: utility "
              "unattended is recounted from each task's recorded exit; approved, the tasks that waited count by "
              "AgentDojo's check alone (the approved runs' exits were not recorded); under attack, AgentDojo's "
              "check alone.")
    print()
    print("Autonomy without attack, with a user who approves every confirmation: consequential calls (effect not "
          "`read`, asking the model aside) executed without a person; every approval the user gave, whatever "
          "the call's effect (page reads included); drafted; blocked:\n")
    print("| suite | consequential calls executed without a person | approvals asked (of them reads) "
          "| drafted | blocked |")
    print("|---|---|---|---|---|")
    for suite, v in rows + [("**all**", total)]:
        print(f"| {suite} | {v['executed']} | {v['asked']} ({reads(v)}) | {v['drafted']} "
              f"| {v['blocked']} |")
    print()
    print("How the runs without attack ended (a completed run may still miss the task's goal):\n")
    print("| suite | completed | waits for the user's confirmation | denied "
          "| error (a verifier refused, or the model had no answer) |")
    print("|---|---|---|---|---|")
    for suite, v in rows + [("**all**", total)]:
        print(f"| {suite} | {v['completed']} | {v['confirm']} | {v['deny']} | {v['error']} |")
    print()
    people = people_table(people_rows)
    recurring_table(recurring_rows)
    total["people"] = people
    return total


def people_table(people_rows):
    """The two approving persons under attack (adversarial Q-LLM) and without; totals per person."""
    if not people_rows:
        return None
    totals = {"attack": {w: {} for w, _ in WHO}, "no_attack": {w: {} for w, _ in WHO}}
    print("Under attack (adversarial Q-LLM), a person decides every claim until the run ends. Attack success is "
          "AgentDojo's check (printed-only successes included), then through tool calls; \"asked\" is the "
          "pairs whose run waited for them; utility counts completed runs. The second person rejects a claim "
          "whose `approval.novelty` shows a `new` or `looks_like` value (a binary without novelty shows none: "
          "then they approve like the first; the last column says how many claims showed novelty at all):\n")
    head = ["suite", "pairs", "nobody approves: attack success (through tool calls)",
            "approves every claim: attack success (through tool calls)", "asked / approvals / utility",
            "refuses a new or look-alike value: attack success (through tool calls)",
            "asked / approvals / refusals / utility", "claims that showed novelty"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    sums = []
    for suite, r in people_rows:
        p = r["persons"]["attack"]
        v = values_of(r)
        line = [suite, str(r["pairs"]), f"{v['aa']} ({v['ta']})"]
        for who, _ in WHO:
            line += person_cells(p[who], who == "novelty")
        line.append(str(p["novelty"]["novelty_shown"]))
        print("| " + " | ".join(line) + " |")
        sums.append((r, v))
        for which in ("attack", "no_attack"):
            for who, _ in WHO:
                for k, n in r["persons"][which][who].items():
                    if isinstance(n, int):
                        totals[which][who][k] = totals[which][who].get(k, 0) + n
    if len(people_rows) > 1:
        p = totals["attack"]
        line = ["**all**", str(sum(r["pairs"] for r, _ in sums)),
                f"{sum(v['aa'] for _, v in sums)} ({sum(v['ta'] for _, v in sums)})"]
        for who, _ in WHO:
            line += person_cells(p[who], who == "novelty")
        line.append(str(p["novelty"]["novelty_shown"]))
        print("| " + " | ".join(line) + " |")
    print()
    print("The same two persons without attack (the tasks whose run waited; utility counts completed runs):\n")
    print("| suite | tasks | asked | approves every claim: approvals / utility "
          "| refuses a new or look-alike value: approvals / refusals / utility |")
    print("|---|---|---|---|---|")
    rows = [(s, r["tasks"], r["persons"]["no_attack"]) for s, r in people_rows]
    if len(people_rows) > 1:
        rows.append(("**all**", sum(r["tasks"] for _, r in people_rows), totals["no_attack"]))
    for suite, tasks, p in rows:
        a, n = p["approve_all"], p["novelty"]
        print(f"| {suite} | {tasks} | {a['asked']} | {a['approvals']} / {a['completed_utility']} "
              f"| {n['approvals']} / {n['refusals']} / {n['completed_utility']} |")
    mismatches = sum(len(r["persons"].get("json_text_mismatches", [])) for _, r in people_rows)
    if mismatches:
        print(f"\n**{mismatches} task(s) where the JSON path and the text path of `approve` disagree** "
              f"(`persons.json_text_mismatches`): the persons' numbers are not to be trusted.")
    print()
    return totals


def recurring_table(recurring_rows):
    """The recurring passes (`--recurring`): what one store of remembered values changes."""
    if not recurring_rows:
        return
    print("Recurring tasks (`--recurring`): every task twice without attack, the first time approved by a "
          "person who remembers what they approved (`approve --remember`), then every pair under the "
          "adversarial Q-LLM, all sharing one store of remembered values per suite:\n")
    print("| suite | pass | episodes | unattended: utility (completed) / attack success (through tool calls) "
          "| approves every claim: approvals / utility / attack success (through tool calls) "
          "| refuses a new or look-alike value: refusals / utility / attack success (through tool calls) |")
    print("|---|---|---|---|---|---|")
    for suite, r in recurring_rows:
        for name, p in r["recurring"]["passes"].items():
            a, n = p["persons"]["approve_all"], p["persons"]["novelty"]
            if name == "attack":
                episodes = p["pairs"]
                unattended = f"{p['completed_utility']} / **{p['attack_success']}** ({p['tool_call_attack_success']})"
                atk = lambda x: f" / **{x['attack_success']}** ({x['tool_call_attack_success']})"  # noqa: E731
            else:
                episodes = p["tasks"]
                unattended = f"{p['completed_unattended_utility']} / –"
                atk = lambda x: " / –"  # noqa: E731
            label = {"first": "1, remembering", "second": "2, with the memories", "attack": "attack, with the memories"}
            print(f"| {suite} | {label.get(name, name)} | {episodes} | {unattended} "
                  f"| {a['approvals']} / {a['completed_utility']}{atk(a)} "
                  f"| {n['refusals']} / {n['completed_utility']}{atk(n)} |")
    print()


def side_by_side(totals):
    print("All four suites, side by side:\n")
    print("| plans | attack success, honest / adversarial (adversary) | of which through tool calls "
          "| control (through tool calls) | utility unattended / approved (completed) "
          "| approvals asked (of them reads) | under attack, approves every claim: attack success (tool calls) "
          "| refuses new values: attack success (tool calls) |")
    print("|---|---|---|---|---|---|---|---|")
    for d, v in totals:
        people = v.get("people")
        cells = ["–", "–"]
        if people:
            cells = [f"**{people['attack'][w].get('attack_success', 0)}** "
                     f"({people['attack'][w].get('tool_call_attack_success', 0)})" for w, _ in WHO]
        print(f"| `{d}` | **{v['ah']} / {v['aa']}** ({v['adversary']}) | **{v['th']} / {v['ta']}** "
              f"| {v['control']} ({v['tc']}) | {v['utility']} / {v['approved']}{'†' if v['old'] else ''} "
              f"of {v['tasks']} | {v['asked']} ({reads(v)}) | {cells[0]} | {cells[1]} |")
    print()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    totals = [(d, t) for d in sys.argv[1:] for t in [table(d)] if t is not None]
    if len(totals) > 1:
        side_by_side(totals)


if __name__ == "__main__":
    main()
