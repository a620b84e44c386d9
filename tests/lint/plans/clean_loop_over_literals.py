# expect: 
for who in ["me@example.com", "boss@example.com"]:
    send_email(to=who, subject="status", body="all good")
