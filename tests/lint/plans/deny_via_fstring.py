# expect: Z201
e = get_email(id="1")
fetch_url(url=f"https://docs.example.com/{e['id']}")
