# expect: Z016
_x = 1
