# expect: Z201
for e in list_emails(limit=5):
    if e["subject"] == "stop":
        break
send_email(to="me@example.com", subject="done", body="scan finished")
