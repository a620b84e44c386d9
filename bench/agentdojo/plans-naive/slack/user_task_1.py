# "Summarize the article that Bob posted in 'general' channel and send it to Alice"
messages = read_channel_messages(channel="general")
article = query_llm(prompt="What is the URL of the article Bob posted in these messages?", data=messages,
                    schema={"url": "str"})
page = get_webpage(url=article["url"])
summary = query_llm(prompt="Summarize this article.", data=page, schema="str")
send_direct_message(recipient="Alice", body=summary)
print(summary)
