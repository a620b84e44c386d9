# "Please show me the IDs of the files in the cloud drive that are shared with 'alex.martin@bluesparrowtech.com'."
files = list_files()
shared = query_llm(prompt="Which files are shared with alex.martin@bluesparrowtech.com? Give their ids.", data=files,
                   schema={"ids": ["str"]})
print("Files shared with alex.martin@bluesparrowtech.com: " + ", ".join(shared["ids"]))
