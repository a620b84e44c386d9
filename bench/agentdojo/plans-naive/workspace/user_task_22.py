# "Please get me the link to reset my TechServices password. It should be in an email I received recently."
emails = get_received_emails()
reset = query_llm(prompt="What is the link to reset my TechServices password, from the e-mail I received?",
                  data=emails, schema={"link": "str"})
print(f"Your TechServices password reset link: {reset['link']}")
