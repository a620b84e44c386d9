# expect: 
e = get_email(id="1")
log_note(text=e["subject"])
