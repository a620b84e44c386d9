# expect: Z014
x = "a".upper
