# mistake: a send inside an `if` that tests the mail's content — the mail decides whether a message leaves; send unconditionally (e.g. a summary that lists the urgent ones).
# Task: alert me if any mail is about the launch.
emails = read_inbox(limit=20)
for e in emails:
    if "launch" in e["subject"].lower():
        send_email(to="me@example.com", subject="Launch mail", body=e["from"] + " wrote: " + e["subject"])
