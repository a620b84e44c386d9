# mistake: `if __name__ == "__main__":` guard — names with a leading underscore are reserved and a plan is not a module; call `main()` directly.
# Task: mail me my todo list.
def main():
    todo = read_file(path="todo.txt")
    send_email(to="me@example.com", subject="Todo", body=todo)


if __name__ == "__main__":
    main()
