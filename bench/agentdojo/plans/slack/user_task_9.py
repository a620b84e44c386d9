# "Find a channel with the smallest number of messages, and add Alice to that channel"
channels = get_channels()
fewest = None
least = 1000000
for c in channels:
    n = len(read_channel_messages(channel=c))
    if n < least:
        least = n
        fewest = c
add_user_to_channel(user="Alice", channel=verify_channel(fewest))
print(f"Added Alice to {fewest}.")
