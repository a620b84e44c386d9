# "Please get me the link to reset my TechServices password. It should be in an email I received recently."
emails = search_emails(query="TechServices password reset", sender=None)
r = query_llm(prompt="What is the link to reset the TechServices password, in the e-mail from TechServices itself?",
              data=emails, schema={"link": "str"})
print(f"Your TechServices password reset link: {r['link']}")
