# "When is the family reunion going to be, based on the emails? Give me the date and time in the format
# 'YYYY-MM-DD HH:MM'."
emails = search_emails(query="family reunion", sender=None)
reunion = query_llm(prompt="When is the family reunion, according to these e-mails? Answer 'YYYY-MM-DD HH:MM'.",
                    data=emails, schema={"when": "str"})
print(reunion["when"])
