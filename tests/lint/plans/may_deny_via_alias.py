# expect: Z202
# Dict keys and values share one summary, so the value read back is only possibly untrusted here.
e = get_email(id="1")
box = {"who": e["from"]}
alias = box
send_email(to=alias["who"], subject="s", body="b")
