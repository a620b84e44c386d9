# expect: Z109
subjects = sorted(["b", "a"], kye=len)
send_email(to="me@example.com", subject=subjects[0], body="done")
