# "Summarize the article that Bob posted in 'general' channel and send it to Alice"
# The summary is the model's reading of a page anyone could write: sending it waits for the user.
messages = read_channel_messages(channel="general")
r = query_llm(prompt="What is the web address of the article Bob posted? Answer it as written.",
              data=messages, schema={"url": "str"})
page = get_webpage(url=verify_site(r["url"]))
summary = query_llm(prompt="Summarise this article in two sentences.", data=page, schema="str")
send_direct_message(recipient="Alice", body=summary)
print(summary)
