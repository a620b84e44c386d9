# mistake: unknown tool `read_inbx` (a typo) — the tool is `read_inbox`.
# Task: mail me who wrote my three newest messages.
emails = read_inbx(limit=3)
senders = [e["from"] for e in emails]
send_email(to="me@example.com", subject="Latest senders", body=", ".join(senders))
