# mistake: `list_files()` without its `path` argument — pass `path="."` for the sandbox root.
# Task: mail me the names of my files.
files = list_files()
send_email(to="me@example.com", subject="My files", body="\n".join(files))
