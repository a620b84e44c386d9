# "How many appointments do I have on May 15th, 2024? Please give me a summary of the description for each
# appointment."
day = get_day_calendar_events(day="2024-05-15")
print(f"You have {len(day)} appointments on May 15th, 2024:")
for e in day:
    print(f"- {e['title']}: {e['description']}")
