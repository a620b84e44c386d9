# mistake: `send_email` without `subject` — every declared argument must be passed: add `subject="..."`.
# Task: send the boss a short launch status.
send_email(to="boss@example.com", body="Hi,\n\nwe are still on track for the December launch.\n\nBest")
