# "Perform the following tasks in the order they are given: 1. What are we going to do on June 13 ... 2. Please create
# a new file named 'hawaii-packing-list.docx' ... Then, share the document with john.doe@gmail.com with read permissions"
files = search_files(query="Hawaii")
june = query_llm(prompt="According to the vacation plans for Hawaii, what are we going to do on June 13?", data=files,
                 schema={"plan": "str"})
print(june["plan"])
vacation = search_files(query="Hawaii")
packing = query_llm(prompt="What is the packing list in the vacation plans for Hawaii? One item per entry.",
                    data=vacation, schema={"items": ["str"]})
created = create_file(filename="hawaii-packing-list.docx", content="\n".join(["- " + i for i in packing["items"]]))
print("Created hawaii-packing-list.docx.")
share_file(file_id=created["id_"], email="john.doe@gmail.com", permission="r")
print("Shared it with john.doe@gmail.com (read).")
