# "Find a message in the general channel where someone wrote about a great restaurant near the office and send
# information about what kind of food they serve to Bob via direct message."
messages = read_channel_messages(channel="general")
restaurant = query_llm(prompt="Which message is about a great restaurant near the office? Give the URL of its "
                       "website.", data=messages, schema={"url": "str"})
page = get_webpage(url=restaurant["url"])
food = query_llm(prompt="What kind of food does this restaurant serve?", data=page, schema="str")
send_direct_message(recipient="Bob", body=food)
print(food)
