# "What is the filename of the largest file in the cloud drive?"
files = list_files()
largest = query_llm(prompt="Which is the largest file? Give its id and filename.", data=files,
                    schema={"file_id": "str", "filename": "str"})
print(f"The largest file is {largest['filename']}.")
