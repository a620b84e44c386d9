# mistake: fetching a URL read from a file — file text is untrusted and private, so it may not choose or travel in a URL; write the URL in the plan.
# Task: fetch the page my notes point to.
notes = read_file(path="notes.md")
url = "http://127.0.0.1/docs/" + notes.splitlines()[0].strip("# ").lower()
page = fetch_url(url=url)
send_email(to="me@example.com", subject="Page from my notes", body=page["body"])
