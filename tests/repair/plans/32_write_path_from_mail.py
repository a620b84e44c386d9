# mistake: a file path chosen by mail content (`write_file(path=subject + ".txt")`) — the sender picks which file is overwritten; use a path written in the plan.
# Task: archive each of my newest messages in a text file.
emails = read_inbox(limit=5)
for e in emails:
    name = e["subject"].lower().replace(" ", "_") + ".txt"
    write_file(path=name, content=e["from"] + "\n\n" + e["body"])
