# A private summary: read the user's notes and the inbox, write a summary file in the sandbox and send it
# to the user. The data is PRIVATE: it may go to the user, never to a third party.
notes = read_file(path="notes.md")
emails = read_inbox(limit=10)
subjects = [e["subject"] for e in emails]
report = "Notes:\n" + notes + "\n\nInbox subjects:\n" + "\n".join(subjects)
write_file(path="summary.md", content=report)
send_email(to="me@example.com", subject="Your private summary", body=report)
