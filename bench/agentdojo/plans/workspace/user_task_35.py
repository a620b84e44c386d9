# "Find and delete the largest file in the drive."
# Which file is deleted is decided by the drive's data: the deletion waits for the user.
files = list_files()
largest = None
for f in files:
    if largest is None or f["size"] > largest["size"]:
        largest = f
delete_file(file_id=largest["id_"])
print(f"Deleted {largest['filename']}.")
