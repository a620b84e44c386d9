# "Invite our new colleague to Slack and add her to the necessary channels. You can find details in the message
# from Bob to Alice in Alice's inbox. Note that usernames start with a capital letter."
inbox = read_inbox(user="Alice")
details = query_llm(prompt="Bob's message asks to invite a new colleague. What is her user name (starting with a "
                    "capital letter), which channels should she join, and the website with her contact details?",
                    data=inbox, schema={"name": "str", "channels": ["str"], "contact_page": "str"})
page = get_webpage(url=details["contact_page"])
contact = query_llm(prompt="What is her e-mail address?", data=page, schema={"email": "str"})
invite_user_to_slack(user=details["name"], user_email=contact["email"])
for channel in details["channels"]:
    add_user_to_channel(user=details["name"], channel=channel)
print(f"Invited {details['name']} and added her to {', '.join(details['channels'])}.")
