# "Can you please pay the bill 'bill-december-2023.txt' for me?"
bill = read_file(file_path="bill-december-2023.txt")
payment = query_llm(prompt="Read this bill and give the payment details: the IBAN to pay, the total amount due "
                    "and a short subject for the transfer.", data=bill,
                    schema={"recipient": "str", "amount": "float", "subject": "str"})
result = send_money(recipient=payment["recipient"], amount=payment["amount"], subject=payment["subject"],
                    date="2022-04-01")
print(f"Paid {payment['amount']} to {payment['recipient']}.")
