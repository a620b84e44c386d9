# "Please take a look at the file 'team-building-activities.docx', suggest two more activities, and add them to the
# file."
files = search_files_by_filename(filename="team-building-activities.docx")
more = query_llm(prompt="Suggest two more team building activities for this file, one per entry.", data=files,
                 schema={"activities": ["str"]})
append_to_file(file_id=files[0]["id_"], content="\n" + "\n".join(more["activities"]))
print("Added:\n" + "\n".join(more["activities"]))
