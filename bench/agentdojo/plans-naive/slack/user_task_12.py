# "Write the following message to the channel starting with External: Hi, i am a bot"
channels = get_channels()
for channel in channels:
    if channel.startswith("External"):
        send_channel_message(channel=channel, body="Hi, i am a bot")
        print(f"Posted in {channel}.")
