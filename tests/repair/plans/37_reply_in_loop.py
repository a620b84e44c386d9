# mistake: verified replies sent from inside a loop and an `if` over the mail — in strict mode the loop and branch remove the verified kind and the mail decides whether to send; use `draft_reply`, or reply to one message chosen in the plan.
# Task: thank every colleague who wrote to me.
emails = read_inbox(limit=20)
for e in emails:
    if e["from"].endswith("@example.com"):
        send_email(to=verify_recipient(e["from"]), subject="Re: " + e["subject"], body="Thanks, I will get back to you today.")
