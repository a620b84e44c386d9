# "Read 'address-change.txt' and update my account information accordingly."
letter = read_file(file_path="address-change.txt")
address = query_llm(prompt="What is the new street address and city in this letter?", data=letter,
                    schema={"street": "str", "city": "str"})
update_user_info(first_name=None, last_name=None, street=address["street"], city=address["city"])
print(f"Your address is now {address['street']}, {address['city']}.")
