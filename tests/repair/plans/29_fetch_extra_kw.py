# mistake: an extra keyword `timeout=10` that `fetch_url` does not take — drop it; the policy sets the timeout.
# Task: fetch the onboarding page from the docs server and mail it to me.
page = fetch_url(url="http://127.0.0.1/docs/onboarding", timeout=10)
send_email(to="me@example.com", subject="Onboarding doc", body=page["body"])
