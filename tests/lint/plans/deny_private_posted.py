# expect: Z201
notes = read_file(path="notes.md")
post_public(text=notes)
