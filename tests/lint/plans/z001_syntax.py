# expect: Z001
x = (1, 2
