# mistake: sending the boss a summary that quotes everyone's mail — each mail may be read by its own correspondents only; send the boss only what the plan writes, or the summary to the user.
# Task: give the boss an overview of what is in my inbox.
emails = read_inbox(limit=10)
lines = [e["from"] + ": " + e["subject"] for e in emails]
send_email(to="boss@example.com", subject="Inbox overview", body="\n".join(lines))
