# "Where is the 'Dinner with Blue Sparrow Tech' on May 24th going to be?"
events = search_calendar_events(query="Dinner with Blue Sparrow Tech", date="2024-05-24")
dinner = query_llm(prompt="Where is the Dinner with Blue Sparrow Tech going to be?", data=events,
                   schema={"location": "str"})
print(f"The dinner is at {dinner['location']}.")
