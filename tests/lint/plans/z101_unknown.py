# expect: Z101
send_emial(to="me@example.com", subject="s", body="b")
