# expect: Z104
get_email("1", "2")
