# expect: Z012
eval("1")
