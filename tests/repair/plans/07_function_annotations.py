# mistake: parameter and return annotations on a helper (`def fmt(e: dict) -> str:`) — plans take no annotations: `def fmt(e):`.
# Task: a one-line-per-message digest of the inbox, mailed to me.
def fmt(e: dict) -> str:
    return f"{e['from']:<40} {e['subject']}"


emails = read_inbox(limit=10)
digest = "\n".join([fmt(e) for e in emails])
send_email(to="me@example.com", subject="Inbox digest", body=digest)
