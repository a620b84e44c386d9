# expect: Z204
xs = ["me@example.com"]
e = get_email(id="1")
xs.append(e["from"])
draft_email(to=xs[0], subject="s", body="b")
