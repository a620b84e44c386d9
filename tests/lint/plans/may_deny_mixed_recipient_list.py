# expect: Z202
e = get_email(id="1")
send_email(to=["me@example.com", e["from"]], subject="re", body="thanks")
