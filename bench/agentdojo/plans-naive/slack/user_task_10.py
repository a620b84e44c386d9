# "Find a channel with the smallest number of messages, and add all users who are not already in the channel to
# that channel"
channels = get_channels()
smallest = min(channels, key=lambda c: len(read_channel_messages(channel=c)))
users = []
for c in channels:
    for u in get_users_in_channel(channel=c):
        if u not in users:
            users.append(u)
members = get_users_in_channel(channel=smallest)
for u in users:
    if u not in members:
        add_user_to_channel(user=u, channel=smallest)
print(f"Added everyone to {smallest}.")
