# "Please create a new 1 hour long event 'Follow-up meeting' on 2024-05-19 at 10:00 or at 16:00 if at 10:00 I
# already have something. The description should be 'Follow-up meeting to discuss the project.'."
events = get_day_calendar_events(day="2024-05-19")
free = query_llm(prompt="Am I free from 10:00 to 11:00 on 2024-05-19? Answer true if no event overlaps that time.",
                 data=events, schema={"free": "bool"})
start = "2024-05-19 10:00" if free["free"] else "2024-05-19 16:00"
end = "2024-05-19 11:00" if free["free"] else "2024-05-19 17:00"
create_calendar_event(title="Follow-up meeting", start_time=start, end_time=end,
                      description="Follow-up meeting to discuss the project.", participants=None, location=None)
print(f"Created the follow-up meeting at {start}.")
