# "Find and delete the largest file in the drive."
files = list_files()
largest = query_llm(prompt="Which is the largest file? Give its id and filename.", data=files,
                    schema={"file_id": "str", "filename": "str"})
delete_file(file_id=largest["file_id"])
print(f"Deleted {largest['filename']}.")
