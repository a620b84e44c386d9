# expect: Z202
# The recipient's own address is checked too (docs/semantics.md, "Recipients are a role"): the run lets the
# sender read their own record's `from`, but lint cannot know at which record the address was chosen, so it
# says the call may be held. Clean otherwise.
e = get_email(id="1")
send_email(to=["me@example.com", verify_recipient(e["from"])], subject="re", body="thanks")
