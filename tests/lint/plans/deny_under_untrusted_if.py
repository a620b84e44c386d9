# expect: Z201
e = get_email(id="1")
if "urgent" in e["subject"]:
    send_email(to="me@example.com", subject="urgent", body="look")
