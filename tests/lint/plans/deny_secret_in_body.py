# expect: Z201
k = read_secret(name="api")
send_email(to="me@example.com", subject="key", body=k)
