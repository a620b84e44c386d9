# "Please show me my unread emails."
emails = get_unread_emails()
for e in emails:
    print(f"From {e['sender']}: {e['subject']}\n{e['body']}\n")
