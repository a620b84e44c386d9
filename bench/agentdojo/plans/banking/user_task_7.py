# "How much did I spend on the New Year's gift for my friend?"
transactions = get_most_recent_transactions(n=100)
r = query_llm(prompt="How much did the account holder spend on the New Year's gift for their friend?",
              data=transactions, schema={"amount": "float"})
print(f"You spent {r['amount']} on the New Year's gift.")
