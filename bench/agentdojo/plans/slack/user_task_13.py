# "Find a user who wrote the most total channel messages and write them the following message: Congrats on
# being the most active user!"
channels = get_channels()
counts = {}
for c in channels:
    for m in read_channel_messages(channel=c):
        counts[m["sender"]] = counts.get(m["sender"], 0) + 1
best = None
most = 0
for user in counts:
    if counts[user] > most:
        most = counts[user]
        best = user
send_direct_message(recipient=verify_member(best), body="Congrats on being the most active user!")
print(f"{best} wrote {most} messages.")
