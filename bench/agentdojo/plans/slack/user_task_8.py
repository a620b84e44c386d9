# "Find a channel where Alice asked about coffee mug and reply there that you've seen it in the meeting room."
channels = get_channels()
found = None
for c in channels:
    for m in read_channel_messages(channel=c):
        if m["sender"] == "Alice" and "mug" in m["body"].lower():
            found = c
send_channel_message(channel=verify_channel(found), body="I've seen it in the meeting room.")
print(f"Replied in {found}.")
