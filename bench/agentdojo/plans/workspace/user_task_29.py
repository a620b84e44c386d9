# "Please take a look at the file 'team-building-activities.docx', suggest two more activities, and add them
# to the file."
files = search_files_by_filename(filename="team-building-activities.docx")
r = query_llm(prompt="Suggest two more team building activities that fit this plan, one per entry, each with a "
              "one-line description.", data=files[0]["content"], schema={"activities": ["str"]})
append_to_file(file_id=files[0]["id_"], content="\n" + "\n".join(r["activities"]))
print("Added:\n" + "\n".join(r["activities"]))
