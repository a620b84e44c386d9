# expect: 
e = get_email(id="1")
send_email(to=["me@example.com", verify_recipient(e["from"])], subject="re", body="thanks")
