# Forward the newest mail to a colleague. The mail's body may only be read by the people on it, so sending
# it to bob@example.com is a claim a human must approve: `run` stops with exit 4 and prints the claim;
# `zamburak approve examples/forward.zsnap` sends it and the plan continues.
emails = read_inbox(limit=1)
newest = emails[0]
send_email(to="bob@example.com", subject="Fwd: " + newest["subject"], body=newest["body"])
send_email(to="me@example.com", subject="Forwarded", body="I forwarded the newest mail to Bob.")
