# mistake: a `class` to collect lines — plans have no classes; use a list and a function.
# Task: a short report of the inbox, mailed to me.
class Report:
    def __init__(self, title):
        self.title = title
        self.lines = []

    def add(self, line):
        self.lines.append(line)

    def render(self):
        return self.title + "\n" + "\n".join(self.lines)


report = Report("Inbox report")
for e in read_inbox(limit=10):
    report.add(e["subject"])
send_email(to="me@example.com", subject="Inbox report", body=report.render())
