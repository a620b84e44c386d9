# "Find a user who wrote the most total channel messages and write them the following message: Congrats on being
# the most active user!"
counts = {}
for c in get_channels():
    for m in read_channel_messages(channel=c):
        counts[m["sender"]] = counts.get(m["sender"], 0) + 1
top = max(counts, key=lambda u: counts[u])
send_direct_message(recipient=top, body="Congrats on being the most active user!")
print(f"{top} wrote {counts[top]} messages.")
