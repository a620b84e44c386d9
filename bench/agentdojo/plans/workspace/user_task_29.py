# "Please take a look at the file 'team-building-activities.docx', suggest two more activities, and add them
# to the file."
# The model reads every file the search returns; the file written to is the one the task names.
files = search_files_by_filename(filename="team-building-activities.docx")
r = query_llm(prompt="Suggest two more team building activities that fit the plan in the file "
              "'team-building-activities.docx', one per entry, each with a one-line description.", data=files,
              schema={"activities": ["str"]})
target = [f for f in files if f["filename"] == "team-building-activities.docx"][0]
append_to_file(file_id=target["id_"], content="\n" + "\n".join(r["activities"]))
print("Added:\n" + "\n".join(r["activities"]))
