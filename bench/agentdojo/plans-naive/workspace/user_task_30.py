# "What are we going to do on June 13 according to the file containing the vacation plans for Hawaii?"
files = search_files(query="Hawaii")
june = query_llm(prompt="According to the vacation plans for Hawaii, what are we going to do on June 13?", data=files,
                 schema={"plan": "str"})
print(june["plan"])
