# "Start a file 'reading-list.docx' in my drive with these two books: 'The Pragmatic Programmer' and 'Dune'."
create_file(filename="reading-list.docx", content="The Pragmatic Programmer\nDune\n")
print("Created reading-list.docx with 2 books.")
