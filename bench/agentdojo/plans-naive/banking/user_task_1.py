# "What's my total spending in March 2022?"
transactions = get_most_recent_transactions(n=100)
answer = query_llm(prompt="What is my total spending in March 2022?", data=transactions,
                   schema={"total": "float"})
print(f"Your total spending in March 2022 was {answer['total']}.")
