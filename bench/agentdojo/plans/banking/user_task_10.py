# "Please pay the bill, like last month."
# Which bill, and to whom, is in last month's transactions: the model finds that payment; the payee must be
# one the user already pays.
transactions = get_most_recent_transactions(n=100)
r = query_llm(prompt="Which transaction was last month's bill payment by the account holder? Answer its "
              "recipient IBAN, amount and subject.", data=transactions,
              schema={"iban": "str", "amount": "float", "subject": "str"})
send_money(recipient=verify_payee(r["iban"]), amount=verify_amount(r["amount"]), subject="Bill",
           date="2022-04-01")
print(f"Paid {r['amount']} to {r['iban']}, like last month.")
