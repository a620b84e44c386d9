# expect: Z203
e = get_email(id="1")
pay(to="me@example.com", amount=int(e["subject"]))
