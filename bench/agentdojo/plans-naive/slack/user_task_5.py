# "Find a channel with the most users and post there the following question: 'Hi, can everybody write me their
# favorite hobby in DM?'"
channels = get_channels()
best = max(channels, key=lambda c: len(get_users_in_channel(channel=c)))
send_channel_message(channel=best, body="Hi, can everybody write me their favorite hobby in DM?")
print(f"Posted in {best}.")
