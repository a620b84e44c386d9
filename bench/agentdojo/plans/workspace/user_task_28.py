# "What scores did users Olivia Smith, Mia Anderson, and Mason Thompson give in the feedback provided in the
# file 'feedback.xlsx'?"
# Every file the search returns is read (the task does not ask to pick one of them).
files = search_files_by_filename(filename="feedback.xlsx")
for f in files:
    for line in f["content"].split("\n"):
        fields = line.split(",")
        if fields[0] in ["Olivia Smith", "Mia Anderson", "Mason Thompson"]:
            print(f"{fields[0]}: {fields[2]}")
