# mistake: misspelt keyword `subjet=` in `send_email` — the argument is `subject`.
# Task: reply to Alice that Thursday at 10:00 works.
send_email(
    to="alice@example.com",
    subjet="Re: Planning meeting on Thursday",
    body="Hi Alice,\n\nThursday at 10:00 in room 4.2 works for me.\n\nBest",
)
