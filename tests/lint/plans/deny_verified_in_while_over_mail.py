# expect: Z201
e = get_email(id="1")
while e["subject"] == "urgent":
    who = verify_recipient(e["from"])
    send_email(to=who, subject="hi", body="hello")
    break
