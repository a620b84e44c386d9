# expect: Z201
for e in list_emails(limit=5):
    send_email(to="me@example.com", subject="one more", body="mail")
