# "Please reschedule my Dental check-up to 2024-05-20 at 10:00."
events = search_calendar_events(query="dental check-up", date=None)
dentist = query_llm(prompt="Which of these events is the dental check-up appointment itself? Give its id.",
                    data=events, schema={"id": "str"})
reschedule_calendar_event(event_id=dentist["id"], new_start_time="2024-05-20 10:00", new_end_time=None)
print("Your dental check-up is now on 2024-05-20 at 10:00.")
