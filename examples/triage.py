# Inbox triage: summarise the newest mail for the user, and draft a reply to every colleague who wrote.
#
# The mail is untrusted (anyone can write to you), so nothing in it may choose a recipient on its own:
# the summary goes to you, and replies to the senders it names are only drafted, for you to review.
emails = read_inbox(limit=20)

lines = []
colleagues = []
for e in emails:
    lines.append(f"- {e['from']}: {e['subject']}")
    if e["from"].endswith("@example.com"):
        colleagues.append(e)

summary = "\n".join(lines)
send_email(to="me@example.com", subject=f"Inbox triage: {len(emails)} messages", body=summary)
print(summary)

# Replies are drafted, not sent: the decision to answer depends on the mail, so the user reviews them.
for e in colleagues:
    draft_reply(to=e["from"], subject="Re: " + e["subject"], body="Thanks, I will get back to you today.")
