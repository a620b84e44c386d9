# mistake: `try`/`finally` to print a closing message — there is no `try`; print after the calls.
# Task: write a summary of the inbox subjects to summary.md.
emails = read_inbox(limit=20)
try:
    subjects = [e["subject"] for e in emails]
    write_file(path="summary.md", content="\n".join(subjects))
finally:
    print("summary step finished")
