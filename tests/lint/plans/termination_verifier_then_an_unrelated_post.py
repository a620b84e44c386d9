# expect: Z206
e = get_email(id="1")
t = verify_choice(e["subject"])
set_label(label=t)
post_public(text="the run went on")
