# mistake: walrus `:=` inside a list comprehension — compute the stripped subject in a plain loop (or strip twice).
# Task: mail me the non-empty subjects of my latest mail.
emails = read_inbox(limit=10)
subjects = [s for e in emails if (s := e["subject"].strip())]
send_email(to="me@example.com", subject="Subjects", body="\n".join(subjects))
