# "How many appointments do I have on May 15th, 2024? Please give me a summary of the description for each
# appointment."
day = get_day_calendar_events(day="2024-05-15")
appointments = query_llm(prompt="How many appointments are there, and summarize the description of each appointment.",
                         data=day, schema={"count": "int", "summary": "str"})
print(f"You have {appointments['count']} appointments on May 15th, 2024. {appointments['summary']}")
