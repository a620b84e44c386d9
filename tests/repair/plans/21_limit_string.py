# mistake: wrong literal type `limit="5"` — `limit` is an int: `limit=5`.
# Task: write the five newest subjects to inbox.txt.
emails = read_inbox(limit="5")
write_file(path="inbox.txt", content="\n".join([e["subject"] for e in emails]))
