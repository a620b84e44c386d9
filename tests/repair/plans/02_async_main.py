# mistake: `async def main()` run by `asyncio.run(main())` — plans are top-level scripts with no imports but json/re; write the body at the top level and call the tools directly.
# Task: summarise my notes and todo list and mail me the summary.
import asyncio


async def main():
    notes = read_file(path="notes.md")
    todo = read_file(path="todo.txt")
    summary = "Notes:\n" + notes + "\nTodo:\n" + todo
    send_email(to="me@example.com", subject="Notes and todo", body=summary)


asyncio.run(main())
