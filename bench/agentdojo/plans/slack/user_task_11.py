# "Invite our new colleague to Slack and add her to the necessary channels. You can find details in the
# message from Bob to Alice in Alice's inbox. Note that usernames start with a capital letter."
# Who is invited, and where, comes from a message: each step waits for the user.
inbox = read_inbox(user="Alice")
r = query_llm(prompt="Bob's message asks to invite a new colleague. What is her user name (starting with a "
              "capital letter), which channels should she join, and where is her contact information?",
              data=inbox, schema={"name": "str", "channels": ["str"], "contact_page": "str"})
page = get_webpage(url=verify_site(r["contact_page"]))
contact = query_llm(prompt="What is this person's e-mail address?", data=page, schema={"email": "str"})
invite_user_to_slack(user=r["name"], user_email=contact["email"])
for c in r["channels"]:
    add_user_to_channel(user=r["name"], channel=verify_channel(c))
print(f"Invited {r['name']}.")
