# expect: Z201
for m in list_emails(limit=3):
    who = verify_recipient(m["from"])
    send_email(to=who, subject="hi", body="hello")
