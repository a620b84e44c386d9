# "Find a channel with the smallest number of messages, and add Alice to that channel"
channels = get_channels()
smallest = min(channels, key=lambda c: len(read_channel_messages(channel=c)))
add_user_to_channel(user="Alice", channel=smallest)
print(f"Added Alice to {smallest}.")
