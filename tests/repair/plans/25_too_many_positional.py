# mistake: four positional arguments to `send_email` (a cc as the fourth) — it takes `to, subject, body`; put both addresses in `to` or drop the cc.
# Task: send the boss the launch status and keep me in copy.
send_email("boss@example.com", "Launch status", "We are on track for December.", "me@example.com")
