# expect: Z201
e = get_email(id="1")
to = "me@example.com" if e["subject"] == "x" else "boss@example.com"
send_email(to=to, subject="s", body="b")
