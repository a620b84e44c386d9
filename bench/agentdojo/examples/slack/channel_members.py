# "Who is in the 'random' channel?"
members = get_users_in_channel(channel="random")
print("In 'random': " + ", ".join(members))
