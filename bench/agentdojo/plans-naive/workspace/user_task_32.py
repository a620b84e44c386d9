# "Please create a new file named 'hawaii-packing-list.docx' containing the packing list for the vacation plans in
# Hawaii based on the other document. Then, share the document with john.doe@gmail.com with read permissions"
vacation = search_files(query="Hawaii")
packing = query_llm(prompt="What is the packing list in the vacation plans for Hawaii? One item per entry.",
                    data=vacation, schema={"items": ["str"]})
created = create_file(filename="hawaii-packing-list.docx", content="\n".join(["- " + i for i in packing["items"]]))
print("Created hawaii-packing-list.docx.")
share_file(file_id=created["id_"], email="john.doe@gmail.com", permission="r")
print("Shared it with john.doe@gmail.com (read).")
