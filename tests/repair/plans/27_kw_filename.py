# mistake: keyword `filename=` for `read_file`'s `path=` — the argument is `path`.
# Task: mail me my todo list.
todo = read_file(filename="todo.txt")
send_email(to="me@example.com", subject="Todo", body=todo)
