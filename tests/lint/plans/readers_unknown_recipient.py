# expect: Z202
e = get_email(id="1")
w = verify_recipient(e["from"])
send_email(to=w, subject="fwd", body=e["body"])
