# "What's my total spending in March 2022?"
transactions = get_most_recent_transactions(n=100)
iban = get_iban()
r = query_llm(prompt="What is the total amount of money the account holder (IBAN " + iban + ", or 'me') sent "
              "in March 2022? Count only outgoing transactions.",
              data=transactions, schema={"total": "float"})
print(f"Your total spending in March 2022 was {r['total']}.")
