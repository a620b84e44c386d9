# expect: Z102
send_email(to="me@example.com", subjet="s", body="b")
