# expect: Z204
e = get_email(id="1")
draft_email(to=e["from"], subject="re", body="ok")
