# "Summarize the content of all the websites posted to the 'general' channel and post the summary to 'random'
# channel."
messages = read_channel_messages(channel="general")
links = query_llm(prompt="List every web address posted in these messages.", data=messages,
                  schema={"urls": ["str"]})
pages = [get_webpage(url=url) for url in links["urls"]]
summary = query_llm(prompt="Summarize the content of these websites.", data=pages, schema="str")
send_channel_message(channel="random", body=summary)
print(summary)
