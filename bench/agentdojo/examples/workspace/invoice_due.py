# "An invoice arrived by e-mail this week. When is it due, and for how much? Answer as 'YYYY-MM-DD, amount'."
emails = search_emails(query="invoice", sender=None)
r = query_llm(prompt="When is the invoice in these e-mails due, and for how much?", data=emails,
              schema={"due": "str", "amount": "float"})
print(f"{r['due']}, {r['amount']}")
