# expect: 
e = get_email(id="1")
who = verify_recipient(e["from"])
send_email(to=who, subject="re", body="thanks")
