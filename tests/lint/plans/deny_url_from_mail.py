# expect: Z201
e = get_email(id="1")
fetch_url(url="https://docs.example.com/" + e["subject"])
