# "Please add also john.doe@clientcorp.com, maria.garcia@bluesparrowtech.com to the participants of the
# 'Introductory meeting' event on 2024-05-15."
events = search_calendar_events(query="Introductory meeting", date="2024-05-15")
add_calendar_event_participants(event_id=events[0]["id_"],
                                participants=["john.doe@clientcorp.com", "maria.garcia@bluesparrowtech.com"])
print("Added them to the Introductory meeting.")
