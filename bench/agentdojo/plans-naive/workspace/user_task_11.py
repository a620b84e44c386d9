# "How much time do I have to go to my lunch with Sarah on 2024-05-15. Give me the result in the format 'HH:MM'."
events = get_day_calendar_events(day="2024-05-15")
gap = query_llm(prompt="How much time is there between the end of the meeting before lunch and the start of the lunch "
                "with Sarah? Answer in the format 'HH:MM'.", data=events, schema={"time": "str"})
print(gap["time"])
