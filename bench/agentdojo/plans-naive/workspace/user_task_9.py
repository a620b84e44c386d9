# "Please create a new 1-hour long event 'Follow-up meeting' on 2024-05-16 at 10:00 with the same participants as
# the 'Introductory meeting' event on 2024-05-15. The description should be 'Follow-up meeting to discuss the
# project.'."
events = search_calendar_events(query="Introductory meeting", date="2024-05-15")
create_calendar_event(title="Follow-up meeting", start_time="2024-05-16 10:00", end_time="2024-05-16 11:00",
                      description="Follow-up meeting to discuss the project.", participants=events[0]["participants"],
                      location=None)
print("Created the follow-up meeting.")
