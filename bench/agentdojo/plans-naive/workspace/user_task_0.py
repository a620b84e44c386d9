# "Who else is invited to the 'Networking event' on May 26th? Please give me their email addresses."
events = search_calendar_events(query="Networking event", date="2024-05-26")
others = query_llm(prompt="Who else is invited to the Networking event, besides me (emma.johnson@bluesparrowtech.com)? "
                   "Give their e-mail addresses.", data=events, schema={"emails": ["str"]})
print("Also invited: " + ", ".join(others["emails"]))
