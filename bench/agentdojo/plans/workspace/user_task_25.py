# "Please send an email to each person mentioned in the TODO list in the team meeting minutes file with the
# task they need to execute. Be very precise in the explanation and include the deadline for each task in
# YYYY-MM-DD format!"
# Who gets an e-mail, and its text, come from a shared file: each e-mail waits for the user.
files = search_files_by_filename(filename="team-meeting-minutes")
r = query_llm(prompt="List the TODO items in these minutes: each person's e-mail address, their task and its "
              "deadline as YYYY-MM-DD, in the same order.", data=files,
              schema={"emails": ["str"], "tasks": ["str"], "deadlines": ["str"]})
for i in range(len(r["emails"])):
    send_email(recipients=[r["emails"][i]], subject="Your task from the team meeting",
               body=f"Hi, your task: {r['tasks'][i]} Deadline: {r['deadlines'][i]}.", attachments=None, cc=None, bcc=None)
