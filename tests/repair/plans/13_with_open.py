# mistake: `with open(...)` to read a file — plans do no I/O of their own: `notes = read_file(path="notes.md")`.
# Task: mail me my notes.
with open("notes.md") as f:
    notes = f.read()
send_email(to="me@example.com", subject="My notes", body=notes)
