# mistake: keyword `recipient=` for `send_email`'s `to=` — the argument is `to`; nothing else is missing.
# Task: send the boss a short launch status.
send_email(
    recipient="boss@example.com",
    subject="Launch status",
    body="We are on track for the December launch.",
)
