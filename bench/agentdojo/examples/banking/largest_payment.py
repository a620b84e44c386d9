# "What is my balance, and which was the largest payment I received this year?"
balance = get_balance()
transactions = get_most_recent_transactions(n=100)
iban = get_iban()
r = query_llm(prompt="Of the payments the account holder (IBAN " + iban + ") received in 2022, which was the "
              "largest? Give its sender and amount.", data=transactions, schema={"sender": "str", "amount": "float"})
print(f"Your balance is {balance}. The largest payment you received this year was {r['amount']} from {r['sender']}.")
