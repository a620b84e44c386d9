# expect: Z103
send_email(to="me@example.com", body="b")
