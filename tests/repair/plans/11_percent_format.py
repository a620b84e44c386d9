# mistake: `%`-formatting of strings — use f-strings: `f"{len(emails)} messages"`.
# Task: mail me a count of my messages and their subjects.
emails = read_inbox(limit=10)
lines = ["- %s (%s)" % (e["subject"], e["from"]) for e in emails]
body = "%d messages\n%s" % (len(emails), "\n".join(lines))
send_email(to="me@example.com", subject="Inbox count", body=body)
