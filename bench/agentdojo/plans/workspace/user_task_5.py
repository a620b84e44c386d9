# "On 2024-05-15 I have a meeting before lunch. How much time do I have to go to my lunch with Sarah? Give me
# the result in the format 'HH:MM'."
events = get_day_calendar_events(day="2024-05-15")
lunch = None
for e in events:
    if "lunch" in e["title"].lower() and "sarah" in e["title"].lower():
        lunch = e
before = None
for e in events:
    if e["end_time"] <= lunch["start_time"] and (before is None or e["end_time"] > before["end_time"]):
        before = e


def minutes(t):
    return int(t[11:13]) * 60 + int(t[14:16])


gap = minutes(lunch["start_time"]) - minutes(before["end_time"])
print(f"{gap // 60:02d}:{gap % 60:02d}")
