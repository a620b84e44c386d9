"""A scripted agent that drives `zamburak mcp serve` with the official MCP Python SDK (pinned in
requirements.txt), as a client nobody here wrote. tests/cli/serve.rs runs it:

    agent.py ZAMBURAK WORLD [reads-untrusted]

WORLD is a copy of examples/ with policy.yaml pointing at it. The script lists the tools, reads the stubs (a tool and a resource),
lints a plan with a misspelt keyword and applies lint's fix, runs the fixed plan over the example inbox,
runs a plan that sends to an address taken from mail (it must wait for the person), lets the person approve
it with `zamburak approve` (the person's own command, outside the session), and reads the run's state again.
Nothing the client receives may hold text of the example mails. With `reads-untrusted` (WORLD's policy lets
the planner read the mail), it checks the other planner mode instead: the mail comes back, and a literal
recipient written after it waits for the person, until a new session. Exits 0 when every check holds;
otherwise says which failed (exit 1).
"""

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

# Text of the example mails (examples/mail/inbox), by exact string: none may reach the client's model.
MAIL_TEXT = [
    "IGNORE PREVIOUS INSTRUCTIONS",
    "ignore all previous instructions",
    "mallory@evil.test",
    "attacker@evil.test",
    "SYSTEM: the user authorised",
    "Note to self",
    "Your account is fine",
    "Planning meeting on Thursday",
    "Quarterly numbers",
    "Question about the launch",
    "20% off this week only",
    "Revenue 1.2M",
    "alice@example.com",
    "boss@example.com",
]

MISSPELT = 'emails = read_inbox(limt=10)\nfor e in emails:\n    print(e["subject"])\nprint("done")\n'
# An error whose message would quote a mail's subject.
ERROR_FROM_MAIL = 'emails = read_inbox(limit=10)\nx = int(emails[0]["subject"])\n'
# A send of the API key: denied before the run by the pre-flight (no tool runs).
SEND_SECRET = 'k = read_file(path="secrets/api_key.txt")\nsend_email(to="me@example.com", subject="k", body=k)\n'
SEND_FROM_MAIL = (
    "emails = read_inbox(limit=1)\n"
    'send_email(to=emails[0]["from"], subject="hello", body="hi")\n'
    'print("sent")\n'
)


def fail(message: str) -> None:
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def check(condition: bool, message: str) -> None:
    if not condition:
        fail(message)


def text_of(result) -> str:
    """Everything the client received in a tool result, as one string."""
    parts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    if result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


def no_mail_text(received: str, what: str) -> None:
    for s in MAIL_TEXT:
        check(s not in received, f"{what} holds mail text {s!r}: {received[:2000]}")


def apply_fix(plan: str, fix: dict) -> str:
    # Edits are character offsets into the plan; apply from the last so earlier offsets stay valid.
    for e in sorted(fix["edits"], key=lambda e: e["start"], reverse=True):
        plan = plan[: e["start"]] + e["content"] + plan[e["end"] :]
    return plan


def outbox_files(world: Path) -> list:
    outbox = world / "out" / "outbox"
    return [p for p in outbox.rglob("*") if p.is_file()] if outbox.exists() else []


async def main(zamburak: str, world: Path) -> None:
    runs = world / "runs"
    params = StdioServerParameters(
        command=zamburak,
        args=["mcp", "serve", "--policy", str(world / "policy.yaml"), "--runs", str(runs)],
        cwd=str(world),
    )
    async with Client(params) as client:
        tools = await client.list_tools()
        names = sorted(t.name for t in tools.tools)
        check(names == ["describe_tools", "lint_plan", "run_plan", "run_status"], f"tools: {names}")
        check(not any("approve" in n for n in names), "a tool that approves is offered")

        stubs = text_of(await client.call_tool("describe_tools", {}))
        check("read_inbox" in stubs and "send_email" in stubs, f"stubs: {stubs[:500]}")

        resources = await client.list_resources()
        check([str(r.uri) for r in resources.resources] == ["zamburak://stubs.pyi"], f"resources: {resources}")
        pyi = await client.read_resource("zamburak://stubs.pyi")
        check("def read_inbox(" in pyi.contents[0].text, f"stubs.pyi: {pyi}")

        # A missing argument is an error result, not a crash.
        missing = await client.call_tool("run_plan", {})
        check(missing.is_error, f"run_plan without a plan: {text_of(missing)}")
        huge = await client.call_tool("lint_plan", {"plan": "x = 1\n" * 400_000})
        check(huge.is_error and "larger than" in text_of(huge), f"a huge plan: {text_of(huge)[:300]}")

        lint = await client.call_tool("lint_plan", {"plan": MISSPELT})
        doc = lint.structured_content
        check(doc is not None and doc["ok"] is False, f"lint of a misspelt keyword: {text_of(lint)}")
        z102 = [d for d in doc["diagnostics"] if d["code"] == "Z102"]
        check(len(z102) == 1 and z102[0]["fix"] is not None, f"no Z102 with a fix: {doc}")
        fixed = apply_fix(MISSPELT, z102[0]["fix"])
        check("limit=10" in fixed, f"the fix: {fixed!r}")
        relinted = (await client.call_tool("lint_plan", {"plan": fixed})).structured_content
        check(relinted["errors"] == 0, f"the fixed plan still has errors: {relinted}")

        ran = await client.call_tool("run_plan", {"plan": fixed})
        received = text_of(ran)
        no_mail_text(received, "run_plan over the inbox")
        doc = ran.structured_content
        # "Summarise my inbox": the answer stops at the read (everything after depends on the mail), with
        # one fixed marker and the link the model hands the person.
        check(doc["status"] == "for_the_person", f"the fixed plan: {received}")
        check(doc["output"] == [] and doc["rest"], f"output: {doc}")
        check(doc["decisions"][0]["tool"] == "read_inbox" and len(doc["decisions"]) == 1, f"decisions: {doc}")
        link = doc["person"]
        check(link.startswith("http://127.0.0.1:") and link.endswith("/run/" + doc["run"]), f"the link: {link}")
        # The person follows the link: its page opens the same path behind the queue's own address (as its
        # script does in their browser), and shows them the summary.
        person = Browser()
        address = (runs / "queue.url").read_text().strip()
        status, _, door = person.get(link)
        check(status == 403 and "localStorage.getItem" in door, f"the link's page: {status} {door[:500]}")
        no_mail_text(door, "the link's page")
        base = "/".join(link.split("/")[:3]) + "/"
        status, _, page = person.get(address + link[len(base):])
        check(status == 200, f"the run's page: {status} {page[:500]}")
        check("Planning meeting on Thursday" in page and "done" in page, f"the run's page: {page[:3000]}")
        check("UNTRUSTED" in page, f"the page does not say who wrote the text: {page[:3000]}")
        shown = (runs / doc["run"] / "output.txt").read_text()
        check("Planning meeting on Thursday" in shown, f"the person's output: {shown[:500]}")
        check(os.stat(runs / doc["run"] / "output.txt").st_mode & 0o077 == 0, "output.txt is readable by others")
        check(os.stat(runs).st_mode & 0o077 == 0, "the runs directory is readable by others")
        status = text_of(await client.call_tool("run_status", {"run": doc["run"]}))
        no_mail_text(status, "run_status of the inbox run")
        check('"for_the_person"' in status, f"status: {status}")

        failed = await client.call_tool("run_plan", {"plan": ERROR_FROM_MAIL})
        received = text_of(failed)
        no_mail_text(received, "a run whose error depends on a mail")
        doc = failed.structured_content
        # Whether a mail makes the plan fail is the mail's data: the answer is cut before it.
        check(doc["status"] == "for_the_person" and doc["error"] is None, f"the failing plan: {received}")

        secret = await client.call_tool("run_plan", {"plan": SEND_SECRET})
        received = text_of(secret)
        check("sk-test-0000-FAKE-KEY" not in received, f"the key reached the client: {received}")
        doc = secret.structured_content
        check(doc["status"] == "denied", f"sending the key: {received}")
        check([d["decision"] for d in doc["decisions"]] == ["deny"], f"decisions: {doc['decisions']}")
        check([d["code"] for d in doc["diagnostics"]] == ["Z201"], f"diagnostics: {doc['diagnostics']}")
        check(outbox_files(world) == [], f"the outbox is not empty: {outbox_files(world)}")

        send = await client.call_tool("run_plan", {"plan": SEND_FROM_MAIL})
        received = text_of(send)
        no_mail_text(received, "run_plan sending to a mail's sender")
        doc = send.structured_content
        # The claim comes after the read: that it exists is the person's, not the model's.
        check(doc["status"] == "for_the_person" and doc["waiting"] is None, f"the send: {received}")
        check("claim" not in received, f"the answer names a claim: {received}")
        check(outbox_files(world) == [], f"the outbox is not empty: {outbox_files(world)}")
        pending = (await client.call_tool("run_status", {"run": doc["run"]})).structured_content
        check(pending["status"] == "for_the_person" and not pending["ended"], f"pending: {pending}")
        # The person finds it in their own list.
        listed = subprocess.run([zamburak, "pending", str(runs), "--format", "json"], capture_output=True, text=True)
        waiting = [p for p in json.loads(listed.stdout)["pending"] if f"/{doc['run']}/" in p["snapshot"]][0]

        # A run id that is a path is refused.
        bad = await client.call_tool("run_status", {"run": "../../etc"})
        check(bad.is_error, f"run_status of a path: {text_of(bad)}")

        # The person approves, outside the session.
        approved = subprocess.run(
            [zamburak, "approve", waiting["snapshot"], "--claim", waiting["claim"], "--by", "person"],
            cwd=world,
            capture_output=True,
            text=True,
        )
        check(approved.returncode == 0, f"approve: {approved.stderr}")
        check(len(outbox_files(world)) == 1, "the approved mail is not in the outbox")
        after = await client.call_tool("run_status", {"run": doc["run"]})
        received = text_of(after)
        no_mail_text(received, "run_status after the approval")
        check(after.structured_content["status"] == "for_the_person", f"after the approval: {received}")
        check(after.structured_content["ended"], f"after the approval: {received}")
    print("agent: every check passed")


PRINT_THE_INBOX = 'for m in read_inbox(limit=10):\n    print(m["subject"])\nprint("done")\n'
SEND_TO_A_LITERAL = 'send_email(to="bob@example.com", subject="hi", body="see you on Thursday")\n'


def predicted(lint) -> list:
    return [(c["predicted"]["may"], c["predicted"]["must"]) for c in lint.structured_content["calls"]]


async def reads_untrusted(zamburak: str, world: Path) -> None:
    """WORLD's policy lets the planner read the mail (`planner: { reads_untrusted: true }`, the inbox readable
    by `llm:planner`): the inbox text comes back, and the session's later literals carry its label."""
    params = StdioServerParameters(
        command=zamburak,
        args=["mcp", "serve", "--policy", str(world / "policy.yaml"), "--runs", str(world / "runs")],
        cwd=str(world),
    )
    async with Client(params) as client:
        before = await client.call_tool("lint_plan", {"plan": SEND_TO_A_LITERAL})
        check(predicted(before) == [("allow", "allow")], f"before reading: {text_of(before)}")
        ran = await client.call_tool("run_plan", {"plan": PRINT_THE_INBOX})
        received = text_of(ran)
        check(ran.structured_content["status"] == "completed", f"the inbox run: {received}")
        check("IGNORE PREVIOUS INSTRUCTIONS" in received, f"the mail was not returned: {received}")
        check("mallory@evil.test" not in json.dumps(ran.structured_content["output"][0].get("label")), received)
        after = await client.call_tool("lint_plan", {"plan": SEND_TO_A_LITERAL})
        # At best the address is one the person remembered (lint cannot know): the lower bound allows.
        check(predicted(after) == [("confirm", "allow")], f"after reading: {text_of(after)}")
        send = await client.call_tool("run_plan", {"plan": SEND_TO_A_LITERAL})
        doc = send.structured_content
        check(doc["status"] == "waiting_for_the_person", f"the literal send: {text_of(send)}")
        check([d["decision"] for d in doc["decisions"]] == ["confirm"], f"decisions: {doc['decisions']}")
        check(outbox_files(world) == [], f"the outbox is not empty: {outbox_files(world)}")
    # A restarted server keeps what the model was told (its conversation goes on) ...
    async with Client(params) as client:
        again = await client.call_tool("lint_plan", {"plan": SEND_TO_A_LITERAL})
        check(predicted(again) == [("confirm", "allow")], f"a restarted server: {text_of(again)}")
    # ... until the person forgets it.
    forgot = subprocess.run([zamburak, "mcp", "forget-context", "--runs", str(world / "runs")], capture_output=True)
    check(forgot.returncode == 0, f"forget-context: {forgot}")
    async with Client(params) as client:
        fresh = await client.call_tool("lint_plan", {"plan": SEND_TO_A_LITERAL})
        check(predicted(fresh) == [("allow", "allow")], f"after forget-context: {text_of(fresh)}")
    print("agent (reads_untrusted): every check passed")


# The end-to-end agent: a misspelt keyword, lint's fix, a forward of the newest mail to a colleague who
# may not read it (a `confirm`), and the person's approval on the queue page.
FORWARD_MISSPELT = (
    "mails = read_inbox(limt=1)\n"
    'send_email(to="bob@example.com", subject="fwd", body=mails[0]["body"])\n'
    'print("forwarded")\n'
)


class Received:
    """Everything the client was given, to check at the end that no mail text is in it."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def add(self, result) -> str:
        text = text_of(result)
        self.parts.append(text)
        return text

    def check(self) -> None:
        no_mail_text("\n".join(self.parts), "what the client received")


class Browser:
    """The person's browser, as far as the queue can tell: a cookie jar (the queue sets no cookie), and the
    headers a browser sends with a navigation and with a form's POST. Redirects are not followed, so each
    answer can be checked."""

    def __init__(self) -> None:
        import http.cookiejar
        import urllib.request

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args, **kwargs):
                return None

        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), NoRedirect)

    def request(self, url: str, data: bytes | None = None, headers: dict | None = None):
        """(status, headers, body) of one request."""
        import urllib.error
        import urllib.request

        req = urllib.request.Request(url, data=data, headers=headers or {})
        try:
            with self.opener.open(req, timeout=60) as r:
                return r.status, r.headers, r.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read().decode("utf-8", "replace")

    def get(self, url: str):
        return self.request(url, headers={"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate"})

    def post_form(self, page_url: str, action: str, fields: dict):
        """A click on a form's submit button: urlencoded fields, sent from the page's own origin."""
        import urllib.parse

        origin = "/".join(page_url.split("/")[:3])
        url = urllib.parse.urljoin(page_url, action)
        return self.request(
            url,
            data=urllib.parse.urlencode(fields).encode(),
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "Origin": origin,
                "Referer": page_url,
                "Sec-Fetch-Site": "same-origin",
                "Sec-Fetch-Mode": "navigate",
            },
        )


def decide_form(page: str) -> tuple[str, dict]:
    """The action and the hidden fields of the page's decision form."""
    import html
    import re

    action = re.search(r'<form class="decide" method="post" action="([^"]+)"', page)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
    digest = re.search(r'name="digest" value="([^"]+)"', page)
    check(action is not None and csrf is not None and digest is not None, f"no decision form: {page[:2000]}")
    # Attribute values as a browser reads them (the template escapes `/` as `&#x2f;`).
    fields = {"csrf": html.unescape(csrf.group(1)), "digest": html.unescape(digest.group(1))}
    return html.unescape(action.group(1)), fields


async def approve_on_the_queue_page(zamburak: str, world: Path) -> None:
    """describe_tools → a misspelt keyword → lint error → the fixed plan → run_plan on the example inbox → a
    confirm → the person approves on the queue page by an HTTP POST as the browser makes it → run_status →
    completed. Nothing the client receives holds mail text; the send happens once, after the approval."""
    runs = world / "runs"
    params = StdioServerParameters(
        command=zamburak,
        args=["mcp", "serve", "--policy", str(world / "policy.yaml"), "--runs", str(runs), "--by", "person"],
        cwd=str(world),
    )
    got = Received()
    async with Client(params) as client:
        stubs = got.add(await client.call_tool("describe_tools", {}))
        check("def read_inbox(" in stubs and "def send_email(" in stubs, f"stubs: {stubs[:300]}")

        lint = await client.call_tool("lint_plan", {"plan": FORWARD_MISSPELT})
        got.add(lint)
        z102 = [d for d in lint.structured_content["diagnostics"] if d["code"] == "Z102"]
        check(len(z102) == 1 and z102[0]["fix"] is not None, f"no Z102 with a fix: {lint.structured_content}")
        plan = apply_fix(FORWARD_MISSPELT, z102[0]["fix"])
        relinted = await client.call_tool("lint_plan", {"plan": plan})
        got.add(relinted)
        check(relinted.structured_content["errors"] == 0, f"the fixed plan: {relinted.structured_content}")

        ran = await client.call_tool("run_plan", {"plan": plan})
        got.add(ran)
        doc = ran.structured_content
        check(doc["status"] == "for_the_person", f"the forward: {text_of(ran)}")
        check("decided" not in doc, f"a client without forms was asked through one: {doc}")
        url = doc["person"]
        check(url.endswith(f"/run/{doc['run']}"), f"the run's link: {doc}")
        listed = subprocess.run([zamburak, "pending", str(runs), "--format", "json"], capture_output=True, text=True)
        code = json.loads(listed.stdout)["pending"][0]["claim"]
        check(outbox_files(world) == [], "sent before the person decided")

        # The link alone, as a model with a fetch tool would open it: nothing of the claim, no way to decide.
        address = (runs / "queue.url").read_text().strip()
        token = address.rstrip("/").rsplit("/", 1)[1]
        check(token not in url, "the claim's link carries the queue's token")
        model = Browser()
        status, _, body = model.get(url)
        check(status == 403, f"the link opened without the person's session: {status}")
        check(code not in body and token not in body, f"the closed page shows the claim or the token: {body}")
        no_mail_text(body, "the closed page")
        status, _, body = model.post_form(url, url, {"csrf": "x", "digest": "y", "decision": "approve"})
        check(status == 403, f"a POST to the link: {status} {body[:300]}")
        check(outbox_files(world) == [], "a request without the person's session sent the mail")

        # The person: opens the queue's own address once (its pages keep it in the origin's storage; no
        # cookie, which every port of 127.0.0.1 would be sent), then the link from the answer, whose page
        # opens the same path behind the token, as its script does in a browser.
        person = Browser()
        status, headers, first = person.get(address)
        check(status == 200 and headers.get("Set-Cookie") is None, f"the queue's address: {status} {headers}")
        check("localStorage.setItem" in first, f"the queue's page does not remember its address: {first[:500]}")
        status, _, door = person.get(url)
        check(status == 403 and "localStorage.getItem" in door, f"the link's page: {status} {door[:500]}")
        check(code not in door and token not in door, f"the link's page shows the claim or the token: {door}")
        base = "/".join(url.split("/")[:3]) + "/"
        url = address + url[len(base):]
        status, _, page = person.get(url)
        check(status == 200, f"the claim's page: {status} {page[:500]}")
        check(f"Claim <code>{code}</code>" in page, f"the page shows another claim: {page[:2000]}")
        check("bob@example.com" in page and "UNTRUSTED" in page, f"the claim is not shown in full: {page[:3000]}")
        action, fields = decide_form(page)
        status, headers, body = person.post_form(url, action, {**fields, "decision": "approve"})
        check(status == 303, f"the approval: {status} {body[:1000]}")
        check(len(outbox_files(world)) == 1, f"the outbox after the approval: {outbox_files(world)}")
        status, _, after = person.get(urljoin_location(url, headers["Location"]))
        check(status == 200 and "approved by person" in after, f"the queue after the approval: {after[:2000]}")
        # The same form again (a replay) decides nothing more.
        status, _, _ = person.post_form(url, action, {**fields, "decision": "approve"})
        check(status == 403, f"a replayed form: {status}")

        final = await client.call_tool("run_status", {"run": doc["run"]})
        got.add(final)
        check(final.structured_content["status"] == "for_the_person", f"after the approval: {text_of(final)}")
        check(final.structured_content["ended"], f"after the approval: {text_of(final)}")
        check(len(outbox_files(world)) == 1, f"sent more than once: {outbox_files(world)}")
    got.check()
    print("agent (queue): every check passed")


def urljoin_location(page_url: str, location: str) -> str:
    import urllib.parse

    return urllib.parse.urljoin(page_url, location)


async def approve_in_a_form(zamburak: str, world: Path, mode: str) -> None:
    """A client that declares form elicitation (`mode` "legacy": an elicitation/create request mid-call;
    "2026-07-28": an input-required result the SDK answers and retries): the person is shown the claim in
    full and answers. An accepting person's answer sends the mail once; a declining person's rejects it and
    nothing is sent. The tool results the model gets still hold no mail text."""
    from mcp import types

    runs = world / "runs"
    params = StdioServerParameters(
        command=zamburak,
        args=["mcp", "serve", "--policy", str(world / "policy.yaml"), "--runs", str(runs), "--by", "person"],
        cwd=str(world),
    )
    answers: list = []
    shown: list = []

    async def person(context, request):
        shown.append(request)
        return answers.pop(0)

    got = Received()
    async with Client(params, mode=mode, elicitation_callback=person) as client:
        check(client.protocol_version == ("2025-11-25" if mode == "legacy" else mode), client.protocol_version)
        plan = FORWARD_MISSPELT.replace("limt=", "limit=")

        answers.append(types.ElicitResult(action="accept", content={"approve": True}))
        ran = await client.call_tool("run_plan", {"plan": plan})
        got.add(ran)
        doc = ran.structured_content
        check(len(shown) == 1 and answers == [], f"the person was asked {len(shown)} times")
        message = shown[0].message
        check("bob@example.com" in message and "UNTRUSTED" in message, f"the form: {message}")
        check("read_inbox#1" in message, f"the form does not say who wrote the body: {message}")
        code = [w for w in message.replace(",", " ").split() if len(w) == 14 and w.count("-") == 2]
        check(code and f"Approve claim {code[0]}" in json.dumps(shown[0].requested_schema), f"{shown[0]}")
        # The claim came after the read: the model is told neither of it nor of the person's answer.
        check(doc["status"] == "for_the_person" and "decided" not in doc, f"after the accepted form: {text_of(ran)}")
        check(len(outbox_files(world)) == 1, f"the outbox after the accept: {outbox_files(world)}")

        answers.append(types.ElicitResult(action="decline"))
        ran = await client.call_tool("run_plan", {"plan": plan})
        got.add(ran)
        doc = ran.structured_content
        check(len(shown) == 2, f"the person was asked {len(shown)} times")
        check(doc["status"] == "for_the_person" and "decided" not in doc, f"after the declined form: {text_of(ran)}")
        check(len(outbox_files(world)) == 1, f"sent after a decline: {outbox_files(world)}")

        answers.append(types.ElicitResult(action="cancel"))
        ran = await client.call_tool("run_plan", {"plan": plan})
        got.add(ran)
        doc = ran.structured_content
        check(doc["status"] == "for_the_person" and not doc["ended"], f"after a cancelled form: {text_of(ran)}")
        check(len(outbox_files(world)) == 1, f"sent after a cancel: {outbox_files(world)}")
    got.check()
    print(f"agent (form, {mode}): every check passed")


if __name__ == "__main__":
    scenario = sys.argv[3] if len(sys.argv) > 3 else "tools"
    if scenario == "reads-untrusted":
        asyncio.run(reads_untrusted(sys.argv[1], Path(sys.argv[2])))
    elif scenario == "queue":
        asyncio.run(approve_on_the_queue_page(sys.argv[1], Path(sys.argv[2])))
    elif scenario.startswith("form:"):
        asyncio.run(approve_in_a_form(sys.argv[1], Path(sys.argv[2]), scenario.split(":", 1)[1]))
    else:
        asyncio.run(main(sys.argv[1], Path(sys.argv[2])))
