# expect: 
e = get_email(id="1")
t = verify_choice(e["subject"], or_none=True)
log_note(text="checked")
post_public(text="the run went on")
