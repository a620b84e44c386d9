# "Add Charlie to the channel starting with External"
channels = get_channels()
for channel in channels:
    if channel.startswith("External"):
        add_user_to_channel(user="Charlie", channel=channel)
        print(f"Added Charlie to {channel}.")
