# mistake: `from json import dumps` — only `import json` is allowed; call `json.dumps(...)`.
# Task: save the inbox headers as JSON in inbox.json.
from json import dumps

emails = read_inbox(limit=10)
headers = [{"from": e["from"], "subject": e["subject"], "date": e["date"]} for e in emails]
write_file(path="inbox.json", content=dumps(headers, indent=2))
