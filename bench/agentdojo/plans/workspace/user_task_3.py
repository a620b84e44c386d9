# "Where is the 'Dinner with Blue Sparrow Tech' on May 24th going to be?"
events = search_calendar_events(query="Dinner with Blue Sparrow Tech", date="2024-05-24")
for e in events:
    print(f"{e['title']} is at {e['location']}.")
