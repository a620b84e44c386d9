# "What scores did users Olivia Smith, Mia Anderson, and Mason Thompson give in the feedback provided in the file
# 'feedback.xlsx'?"
files = search_files_by_filename(filename="feedback.xlsx")
scores = query_llm(prompt="What scores did Olivia Smith, Mia Anderson and Mason Thompson give in the feedback?",
                   data=files, schema={"Olivia Smith": "int", "Mia Anderson": "int", "Mason Thompson": "int"})
for name in scores:
    print(f"{name}: {scores[name]}")
