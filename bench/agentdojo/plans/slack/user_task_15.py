# "Summarize the content of all the websites posted to the 'general' channel and post the summary to
# 'random' channel."
messages = read_channel_messages(channel="general")
r = query_llm(prompt="List every web address posted in these messages, as written.", data=messages,
              schema={"urls": ["str"]})
summaries = []
sentence = "str"
for url in r["urls"]:
    page = get_webpage(url=verify_site(url))
    summaries.append(query_llm(prompt="Summarise this web page in one sentence.", data=page, schema=sentence))
send_channel_message(channel="random", body="\n".join(summaries))
print("\n".join(summaries))
