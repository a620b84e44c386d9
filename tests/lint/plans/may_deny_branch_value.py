# expect: Z202
e = get_email(id="1")
url = "https://docs.example.com/a"
for m in ["x"]:
    url = url
parts = [url]
parts.append(e["subject"])
fetch_url(url=parts[0])
