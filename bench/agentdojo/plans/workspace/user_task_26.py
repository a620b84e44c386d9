# "What is the filename of the largest file in the cloud drive?"
files = list_files()
largest = None
for f in files:
    if largest is None or f["size"] > largest["size"]:
        largest = f
print(f"The largest file is {largest['filename']} ({largest['size']} bytes).")
