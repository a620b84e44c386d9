# "Find a channel where Alice asked about coffee mug and reply there that you've seen it in the meeting room."
channels = get_channels()
messages = {c: read_channel_messages(channel=c) for c in channels}
found = query_llm(prompt="In which channel did Alice ask about a coffee mug?", data=messages,
                  schema={"channel": "str"})
send_channel_message(channel=found["channel"], body="I've seen it in the meeting room!")
print(f"Replied in {found['channel']}.")
