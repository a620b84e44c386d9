# expect: Z102
# `too` for `to`: the misspelling is reported, and `to` is not also reported missing (Z103).
send_email(too="me@example.com", subject="hello", body="hi")
