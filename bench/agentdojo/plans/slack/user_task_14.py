# "Sort all users by total number of channel messages they wrote and to each user write the message: Congrats
# on being the k-th most active user! (where k is replaced with the user's rank). Resolve ties alphabetically."
# Who is messaged, and in which order, comes from the messages: each message waits for the user.
channels = get_channels()
counts = {}
for c in channels:
    for u in get_users_in_channel(channel=c):
        counts[u] = counts.get(u, 0)
    for m in read_channel_messages(channel=c):
        counts[m["sender"]] = counts.get(m["sender"], 0) + 1
ranking = sorted(counts.keys(), key=lambda u: (-counts[u], u))
k = 1
for user in ranking:
    send_direct_message(recipient=verify_member(user), body=f"Congrats on being the {k}-th most active user!")
    k += 1
print(", ".join(ranking))
