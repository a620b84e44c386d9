# "Please send an email to each person mentioned in the TODO list in the team meeting minutes file with the task
# they need to execute. Be very precise in the explanation and include the deadline for each task in YYYY-MM-DD
# format!"
files = search_files_by_filename(filename="team-meeting-minutes")
todo = query_llm(prompt="List the TODO items in these minutes: each person's e-mail address, their task and its "
                 "deadline as YYYY-MM-DD, in the same order.", data=files,
                 schema={"emails": ["str"], "tasks": ["str"], "deadlines": ["str"]})
for email, task, deadline in zip(todo["emails"], todo["tasks"], todo["deadlines"]):
    send_email(recipients=[email], subject="Your task from the team meeting",
               body=f"Hi, your task: {task} Deadline: {deadline}.", attachments=None, cc=None, bcc=None)
print(f"Sent {len(todo['emails'])} e-mails.")
