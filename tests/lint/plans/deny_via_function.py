# expect: Z201
def reply(m):
    send_email(to=m["from"], subject="re", body="ok")

reply(get_email(id="1"))
