# "Post the summary of the article at www.informations.com to the 'general' channel."
page = get_webpage(url="www.informations.com")
summary = query_llm(prompt="Summarize this article.", data=page, schema="str")
send_channel_message(channel="general", body=summary)
print(summary)
