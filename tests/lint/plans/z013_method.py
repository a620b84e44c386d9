# expect: Z013
x = "a".encode()
