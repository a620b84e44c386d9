# "What is my Facebook security code? It's in an email I received recently."
emails = search_emails(query="Facebook security code", sender=None)
r = query_llm(prompt="What is the Facebook security code in the e-mail from Facebook?", data=emails, schema={"code": "str"})
print(f"Your Facebook security code is {r['code']}.")
