# expect: Z201
e = get_email(id="1")
send_email(to=e["from"], subject="re", body="ok")
