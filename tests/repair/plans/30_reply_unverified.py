# mistake: a reply to the sender taken from the mail without `verify_recipient` — untrusted data chooses the recipient; pass it through `to=verify_recipient(e["from"])`.
# Task: answer the boss's question about the launch.
e = search_email(query="launch")[0]
send_email(to=e["from"], subject="Re: " + e["subject"], body="Yes, we are on track for the December launch.")
