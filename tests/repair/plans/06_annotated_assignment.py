# mistake: annotated assignments `limit: int = 10` and `lines: list[str] = []` — drop the annotations: `limit = 10`.
# Task: list who wrote to me recently.
limit: int = 10
emails = read_inbox(limit=limit)
lines: list[str] = []
for e in emails:
    lines.append(e["from"])
send_email(to="me@example.com", subject="Recent senders", body="\n".join(lines))
