# mistake: record key `e["sender"]` which mail records do not have — the sender is `e["from"]`.
# Task: write the senders of my ten newest messages to senders.txt.
emails = read_inbox(limit=10)
senders = [e["sender"] for e in emails]
write_file(path="senders.txt", content="\n".join(senders))
