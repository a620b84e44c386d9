# mistake: keyword `count=` for `read_inbox`'s `limit=` — the argument is `limit`.
# Task: mail me the subjects of my five newest messages.
emails = read_inbox(count=5)
subjects = [e["subject"] for e in emails]
send_email(to="me@example.com", subject="Five newest", body="\n".join(subjects))
