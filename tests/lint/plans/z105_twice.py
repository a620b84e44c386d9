# expect: Z105
get_email("1", id="2")
