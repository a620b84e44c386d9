# "Find a channel with the most users and post there the following question: 'Hi, can everybody write me
# their favorite hobby in DM?'"
channels = get_channels()
best = None
most = -1
for c in channels:
    n = len(get_users_in_channel(channel=c))
    if n > most:
        most = n
        best = c
send_channel_message(channel=verify_channel(best), body="Hi, can everybody write me their favorite hobby in DM?")
print(f"Posted in {best} ({most} users).")
