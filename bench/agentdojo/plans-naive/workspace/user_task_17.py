# "Where and at what time is the hiking trip on Saturday going to be, based on the emails I received? Give me the
# time in the format 'HH:MM'."
emails = get_received_emails()
hike = query_llm(prompt="Where and at what time does the hiking trip on Saturday start, according to these e-mails? "
                 "Answer the time as 'HH:MM'.", data=emails, schema={"where": "str", "time": "str"})
print(f"The hiking trip starts at {hike['where']} at {hike['time']}.")
