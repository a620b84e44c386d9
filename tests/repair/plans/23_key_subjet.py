# mistake: record key `e["subjet"]` (misspelt) — the key is `subject`.
# Task: mail me the subjects of the mail from my colleagues.
emails = read_inbox(limit=20)
lines = []
for e in emails:
    if e["from"].endswith("@example.com"):
        lines.append(e["subjet"])
send_email(to="me@example.com", subject="From colleagues", body="\n".join(lines))
