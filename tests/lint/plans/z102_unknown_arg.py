# expect: Z102,Z103
send_email(to="me@example.com", subjet="s", body="b")
