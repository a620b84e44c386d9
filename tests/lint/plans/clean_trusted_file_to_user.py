# expect: 
notes = read_file(path="notes.md")
send_email(to="me@example.com", subject="notes", body=notes)
