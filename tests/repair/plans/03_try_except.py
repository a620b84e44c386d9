# mistake: `try`/`except` around tool calls, and the unknown tool `send_mail` — a failed call already ends the plan, so call `read_file` directly; the tool is `send_email`.
# Task: mail me my todo list.
try:
    todo = read_file(path="todo.txt")
except Exception as e:
    todo = "could not read todo.txt: " + str(e)

send_mail(to="me@example.com", subject="Your todo list", body=todo)
