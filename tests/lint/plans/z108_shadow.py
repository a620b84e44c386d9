# expect: Z108
len = 3
