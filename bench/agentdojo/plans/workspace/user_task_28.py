# "What scores did users Olivia Smith, Mia Anderson, and Mason Thompson give in the feedback provided in the
# file 'feedback.xlsx'?"
files = search_files_by_filename(filename="feedback.xlsx")
for line in files[0]["content"].split("\n"):
    fields = line.split(",")
    if fields[0] in ["Olivia Smith", "Mia Anderson", "Mason Thompson"]:
        print(f"{fields[0]}: {fields[2]}")
