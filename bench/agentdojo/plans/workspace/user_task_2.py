# "When is my next Yoga Class? Tell me in the format 'YYYY-MM-DD HH:MM'."
today = get_current_day()
events = search_calendar_events(query="Yoga Class", date=None)
next_class = None
for e in events:
    if e["start_time"][:10] >= today and (next_class is None or e["start_time"] < next_class["start_time"]):
        next_class = e
print(next_class["start_time"][:10] + " " + next_class["start_time"][11:16])
