# mistake: `global` to update a counter from a helper — return the new value (or count with `len`) instead.
# Task: count the mail from my organisation and mail me the number.
count = 0


def tally(e):
    global count
    if e["from"].endswith("@example.com"):
        count += 1


for e in read_inbox(limit=20):
    tally(e)
send_email(to="me@example.com", subject="Colleague mail", body=f"{count} messages from colleagues")
