# mistake: keyword `text=` for `write_file`'s `content=` — the argument is `content`.
# Task: save a summary of my notes and inbox in summary.md.
notes = read_file(path="notes.md")
emails = read_inbox(limit=10)
report = notes + "\n\nInbox:\n" + "\n".join([e["subject"] for e in emails])
write_file(path="summary.md", text=report)
