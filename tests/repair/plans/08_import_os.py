# mistake: an unused `import os` left from habit — imports other than json/re are refused; delete the line (the files tools take paths relative to the sandbox).
# Task: mail me the names of the files in my sandbox.
import os

names = list_files(path=".")
send_email(to="me@example.com", subject="Your files", body="\n".join(names))
