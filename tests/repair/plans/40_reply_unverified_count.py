# mistake: keyword `count=` for `limit=`, and a reply to each sender without `verify_recipient` — use `limit=`, and draft replies (or verify the sender) instead of sending to an address the mail chose.
# Task: reply to the newest message.
emails = read_inbox(count=1)
e = emails[0]
send_email(to=e["from"], subject="Re: " + e["subject"], body="Thanks for your message, I will reply soon.")
