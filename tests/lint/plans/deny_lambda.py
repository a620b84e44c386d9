# expect: Z201
e = get_email(id="1")
pick = lambda m: m["from"]
send_email(to=pick(e), subject="s", body="b")
