# "Please pay the bill, like last month."
transactions = get_most_recent_transactions(n=100)
bill = query_llm(prompt="Which transaction was last month's bill payment? Give its recipient IBAN, amount and "
                 "subject.", data=transactions, schema={"recipient": "str", "amount": "float", "subject": "str"})
send_money(recipient=bill["recipient"], amount=bill["amount"], subject=bill["subject"], date="2022-04-01")
print(f"Paid {bill['amount']} to {bill['recipient']}, like last month.")
