#!/usr/bin/env python3
"""A test aid for the harness only, never for recorded numbers: a stand-in `zamburak` that runs the real
binary and adds the interface issue #52 codes against before the binary has it, so `runner.py --persons` and
`--recurring` can be exercised end to end:

* `approve --help` lists `--remember`; `approve … --remember ARG` (repeatable) is taken off the command line
  and the claim's value of ARG is added to the store named by `ZAMBURAK_KNOWN` (a JSON list of strings);
* a `--format json` document of `run` or `approve` waiting on a claim gets `approval.novelty`: one entry per
  identifier-like argument (recipient, url, user, channel, e-mail, IBAN, file, participants…; each element of
  a list), `known` when the store holds the value, `looks_like` when it holds one differing only in case or by
  at most two characters, else `new`.

The real binary is `ZAMBURAK_REAL` (default: target/release/zamburak beside this checkout). Run the harness
with `--zamburak bench/agentdojo/novelty_shim.py`. What the real binary will call new, known or a look-alike
is its own: this shim only makes the harness's plumbing testable."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.environ.get("ZAMBURAK_REAL", os.path.join(HERE, "..", "..", "target", "release", "zamburak"))
IDENTIFIERS = ("recipient", "url", "user", "channel", "email", "iban", "file_id", "participants", "company",
               "hotel", "restaurant")


def store_path():
    return os.environ.get("ZAMBURAK_KNOWN")


def load_store():
    path = store_path()
    if not path or not os.path.exists(path):
        return []
    with open(path) as f:
        return json.load(f)


def pending_path():
    # What each claim shown in a JSON document held, so `--remember ARG` knows the value it remembers.
    return (store_path() or os.path.join(os.environ.get("TMPDIR", "/tmp"), "novelty-shim")) + ".claims.json"


def close(a, b):
    if a.lower() == b.lower():
        return True
    if abs(len(a) - len(b)) > 2:
        return False
    # Edit distance at most 2 (small strings: a plain dynamic programme).
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1] <= 2


def novelty(values, known):
    out = []
    for arg, value in values.items():
        if not any(k in arg for k in IDENTIFIERS):
            continue
        items = [(None, value)] if isinstance(value, str) else (
            list(enumerate(value)) if isinstance(value, list) else [])
        for index, v in items:
            if not isinstance(v, str):
                continue
            if v in known:
                out.append({"arg": arg, "index": index, "status": "known", "like": None})
            else:
                like = next((k for k in known if close(k, v)), None)
                out.append({"arg": arg, "index": index, "status": "looks_like" if like else "new", "like": like})
    return out


def main():
    argv = sys.argv[1:]
    remember = []
    if argv and argv[0] == "approve":
        rest = []
        i = 0
        while i < len(argv):
            if argv[i] == "--remember" and i + 1 < len(argv):
                remember.append(argv[i + 1])
                i += 2
            else:
                rest.append(argv[i])
                i += 1
        argv = rest
        if "--help" in argv or "-h" in argv:
            done = subprocess.run([REAL] + argv, capture_output=True, text=True)
            sys.stdout.write(done.stdout + "      --remember <ARG>   (novelty_shim) remember the claim's value of ARG\n")
            return done.returncode
        if remember:
            snapshot = argv[1]
            claims = {}
            if os.path.exists(pending_path()):
                with open(pending_path()) as f:
                    claims = json.load(f)
            values = claims.get(os.path.abspath(snapshot), {})
            known = load_store()
            for arg in remember:
                v = values.get(arg)
                for x in ([v] if isinstance(v, str) else v if isinstance(v, list) else []):
                    if isinstance(x, str) and x not in known:
                        known.append(x)
            if store_path():
                with open(store_path(), "w") as f:
                    json.dump(known, f)
    json_mode = "--format" in argv and argv[argv.index("--format") + 1:argv.index("--format") + 2] == ["json"]
    done = subprocess.run([REAL] + argv, capture_output=json_mode, text=True)
    if not json_mode:
        return done.returncode
    sys.stderr.write(done.stderr)
    try:
        doc = json.loads(done.stdout)
    except ValueError:
        sys.stdout.write(done.stdout)
        return done.returncode
    claim = doc.get("approval") if isinstance(doc, dict) else None
    if isinstance(claim, dict):
        claim["novelty"] = novelty(claim.get("values") or {}, load_store())
        claims = {}
        if os.path.exists(pending_path()):
            with open(pending_path()) as f:
                claims = json.load(f)
        claims[os.path.abspath(claim["snapshot"])] = claim.get("values") or {}
        with open(pending_path(), "w") as f:
            json.dump(claims, f)
    sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
