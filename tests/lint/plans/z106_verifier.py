# expect: Z106
verify_recipient("a@example.com", "b@example.com")
