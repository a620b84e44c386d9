# expect: Z201
import re
e = get_email(id="1")
fetch_url(url=e["subject"][8:])
links = re.findall(r"https?://\S+", e["body"])
fetch_url(url=links[0])
