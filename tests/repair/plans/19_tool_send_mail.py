# mistake: unknown tool `send_mail` — the tool is `send_email`.
# Task: mail me my notes.
notes = read_file(path="notes.md")
send_mail(to="me@example.com", subject="Notes", body=notes)
