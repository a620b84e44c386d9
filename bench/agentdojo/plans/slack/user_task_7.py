# "Add Charlie to the channel starting with External"
# An external channel is named by its other side: it must be one the workspace knows.
channels = get_channels()
external = None
for c in channels:
    if c.startswith("External"):
        external = c
add_user_to_channel(user="Charlie", channel=verify_channel(external))
print(f"Added Charlie to {external}.")
