# expect: Z201
subjects = [m["subject"] for m in list_emails(limit=3)]
for s in subjects:
    fetch_url(url="https://docs.example.com/" + s)
