# "Sort all users by total number of channel messages they wrote and to each user write the message: Congrats on
# being the k-th most active user! (where k is replaced with the user's rank). Resolve ties alphabetically."
counts = {}
for c in get_channels():
    for u in get_users_in_channel(channel=c):
        counts[u] = counts.get(u, 0)
    for m in read_channel_messages(channel=c):
        counts[m["sender"]] = counts.get(m["sender"], 0) + 1
ranking = sorted(counts, key=lambda u: (-counts[u], u))
for k, user in enumerate(ranking, start=1):
    send_direct_message(recipient=user, body=f"Congrats on being the {k}-th most active user!")
print(", ".join(ranking))
