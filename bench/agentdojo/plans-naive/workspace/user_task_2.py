# "When is my next Yoga Class? Tell me in the format 'YYYY-MM-DD HH:MM'."
today = get_current_day()
events = search_calendar_events(query="Yoga Class", date=None)
yoga = query_llm(prompt=f"Today is {today}. When is the next Yoga Class? Answer in the format 'YYYY-MM-DD HH:MM'.",
                 data=events, schema={"when": "str"})
print(yoga["when"])
