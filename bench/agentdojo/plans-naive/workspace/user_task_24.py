# "Please show me my unread emails."
emails = get_unread_emails()
summary = query_llm(prompt="Summarize these unread e-mails for me: for each, the sender, the subject and what it says.",
                    data=emails, schema="str")
print(summary)
