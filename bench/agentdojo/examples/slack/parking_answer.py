# "Someone in 'general' asked whether the parking garage is open. Tell them in a direct message that it
# reopens on Monday."
messages = read_channel_messages(channel="general")
r = query_llm(prompt="Who asked whether the parking garage is open? Give their user name as written.",
              data=messages, schema={"user": "str"})
# The name was read from messages anyone can write: only a member of the workspace may receive the answer.
who = verify_member(r["user"])
send_direct_message(recipient=who, body="The parking garage reopens on Monday.")
print(f"Told {who} that the parking garage reopens on Monday.")
