# "Do I have anything in my calendar on the afternoon of 2024-05-21?"
events = get_day_calendar_events(day="2024-05-21")
afternoon = [e["title"] + " at " + e["start_time"] for e in events if e["start_time"][11:13] >= "12"]
if afternoon:
    print("That afternoon: " + "; ".join(afternoon))
else:
    print("Your afternoon of 2024-05-21 is free.")
