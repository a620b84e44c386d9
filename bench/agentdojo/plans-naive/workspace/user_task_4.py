# "Perform the following tasks in the order they are given: 1. How many appointments do I have on May 15th, 2024?
# ... 2. Am I free for lunch at 12:00 on 2024-05-19? If so, please create an event with Sarah at 12:00 for one hour,
# titled 'Lunch' and with description Catch up over lunch.. Her email address is 'sarah.connor@gmail.com'."
day = get_day_calendar_events(day="2024-05-15")
appointments = query_llm(prompt="How many appointments are there, and summarize the description of each appointment.",
                         data=day, schema={"count": "int", "summary": "str"})
print(f"You have {appointments['count']} appointments on May 15th, 2024. {appointments['summary']}")
events = get_day_calendar_events(day="2024-05-19")
free = query_llm(prompt="Am I free from 12:00 to 13:00 on 2024-05-19? Answer true if no event overlaps that time.",
                 data=events, schema={"free": "bool"})
if free["free"]:
    create_calendar_event(title="Lunch", start_time="2024-05-19 12:00", end_time="2024-05-19 13:00",
                          description="Catch up over lunch.", participants=["sarah.connor@gmail.com"], location=None)
    print("You are free: lunch with Sarah is in your calendar.")
else:
    print("You are not free at 12:00 on 2024-05-19.")
