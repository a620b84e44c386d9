# "I paid for the concert tickets last month (see my transactions). Send half of it to my flatmate,
# DE89370400440532013000."
flatmate = "DE89370400440532013000"
transactions = get_most_recent_transactions(n=100)
r = query_llm(prompt="How much did the account holder pay for concert tickets?", data=transactions,
              schema={"amount": "float"})
# The amount was read from data anyone can write: within the user's limit it needs no confirmation.
share = verify_amount(r["amount"] / 2)
send_money(recipient=flatmate, amount=share, subject="Concert tickets, your half", date="2022-04-01")
print(f"Sent {share} to {flatmate} for the concert tickets.")
