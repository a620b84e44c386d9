# "How many appointments do I have today?"
today = get_current_day()
events = get_day_calendar_events(day=today)
print(f"You have {len(events)} appointments today ({today}).")
