# expect: 
send_email(to="me@example.com", subject="hi", body="done")
