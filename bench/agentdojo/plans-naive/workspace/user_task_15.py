# "Create an event in the calendar for the family reunion based on the emails about it. Make the event last 4
# hours."
emails = search_emails(query="family reunion", sender=None)
reunion = query_llm(prompt="When and where is the family reunion, according to these e-mails? Answer the start as "
                    "'YYYY-MM-DD HH:MM'.", data=emails, schema={"when": "str", "where": "str"})
start = reunion["when"]
end = start[:11] + f"{int(start[11:13]) + 4:02d}" + start[13:]
create_calendar_event(title="Family Reunion", start_time=start, end_time=end, description="Family reunion.",
                      participants=None, location=reunion["where"])
print(f"Family reunion: {start} to {end}.")
