# expect: Z201
e = get_email(id="1")
n = int(e["subject"])
while n > 0:
    send_email(to="me@example.com", subject="tick", body="t")
    n = n - 1
