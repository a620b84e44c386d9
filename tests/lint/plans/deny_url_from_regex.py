# expect: Z201
import re
emails = search_email(query="invoice")
m = re.search(r"https?://\S+", emails[0]["body"])
fetch_url(url=m.group(0))
