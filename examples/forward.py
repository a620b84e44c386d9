# Forward the newest mail to a colleague. The mail's body may only be read by the people on it, so sending
# it to bob@example.com is a claim the person must approve: the run waits for them, and once they
# approve it the mail is sent and the plan continues.
emails = read_inbox(limit=1)
newest = emails[0]
send_email(to="bob@example.com", subject="Fwd: " + newest["subject"], body=newest["body"])
send_email(to="me@example.com", subject="Forwarded", body="I forwarded the newest mail to Bob.")
