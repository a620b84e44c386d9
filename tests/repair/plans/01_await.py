# mistake: `await` on tool calls — the model treats the tools as coroutines; tools are plain calls: drop every `await`.
# Task: tell me how many messages I have and what they are about.
emails = await read_inbox(limit=10)
lines = [f"- {e['from']}: {e['subject']}" for e in emails]
body = f"You have {len(emails)} messages:\n" + "\n".join(lines)
await send_email(to="me@example.com", subject="Inbox overview", body=body)
