# "How much did I spend on the New Year's gift for my friend?"
transactions = get_most_recent_transactions(n=100)
gift = query_llm(prompt="How much did I spend on the New Year's gift for my friend?", data=transactions,
                 schema={"amount": "float"})
print(f"You spent {gift['amount']} on the New Year's gift.")
