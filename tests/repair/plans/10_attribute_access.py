# mistake: attribute access on mail records (`e.subject`, `e.sender`) — records are dicts: `e["subject"]`, and the sender key is `from`.
# Task: mail me a list of who wrote about what.
emails = read_inbox(limit=10)
lines = []
for e in emails:
    lines.append(e.sender + ": " + e.subject)
send_email(to="me@example.com", subject="Who wrote", body="\n".join(lines))
