# "What is my Facebook security code? It's in an email I received recently."
emails = get_received_emails()
facebook = query_llm(prompt="What is my Facebook security code, from the e-mail I received?", data=emails,
                     schema={"code": "str"})
print(f"Your Facebook security code is {facebook['code']}.")
