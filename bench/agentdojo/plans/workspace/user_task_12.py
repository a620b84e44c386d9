# "Please create a new 1 hour long event 'Follow-up meeting' on 2024-05-19 at 10:00 or at 16:00 if at 10:00 I
# already have something. The description should be 'Follow-up meeting to discuss the project.'."
events = get_day_calendar_events(day="2024-05-19")
busy = False
for e in events:
    if e["start_time"][11:16] < "11:00" and e["end_time"][11:16] > "10:00":
        busy = True
start = "2024-05-19 10:00"
end = "2024-05-19 11:00"
if busy:
    start = "2024-05-19 16:00"
    end = "2024-05-19 17:00"
create_calendar_event(title="Follow-up meeting", start_time=start, end_time=end,
                      description="Follow-up meeting to discuss the project.", participants=None, location=None)
print(f"Created the follow-up meeting at {start}.")
