# "Am I free for lunch at 12:00 on 2024-05-19? If so, please create an event with Sarah Baker at 12:00 for one hour,
# titled 'Lunch' and with description Catch up over lunch.. Don't forget to add her email address to the
# participants."
events = get_day_calendar_events(day="2024-05-19")
free = query_llm(prompt="Am I free from 12:00 to 13:00 on 2024-05-19? Answer true if no event overlaps that time.",
                 data=events, schema={"free": "bool"})
contacts = search_contacts_by_name(query="Sarah Baker")
if free["free"]:
    create_calendar_event(title="Lunch", start_time="2024-05-19 12:00", end_time="2024-05-19 13:00",
                          description="Catch up over lunch.", participants=[contacts[0]["email"]], location=None)
    print("You are free: lunch with Sarah Baker is in your calendar.")
else:
    print("You are not free at 12:00 on 2024-05-19.")
