# mistake: fetching a URL found in a mail without `verify_url` — the mail chooses where to connect; a URL from mail is also private, so the plan should not fetch it (or the user writes the URL into the plan).
# Task: open the link in the mail that asks me to confirm something, and mail me what the page says.
import re

e = search_email(query="confirm")[0]
link = re.search(r"https?://\S+", e["body"]).group(0)
page = fetch_url(url=link)
send_email(to="me@example.com", subject="The linked page", body=page["body"])
