# "Write the following message to the channel starting with External: Hi, i am a bot"
channels = get_channels()
external = None
for c in channels:
    if c.startswith("External"):
        external = c
send_channel_message(channel=verify_channel(external), body="Hi, i am a bot")
print(f"Posted in {external}.")
