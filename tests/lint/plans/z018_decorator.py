# expect: Z018
def d(f):
    return f

@d
def g():
    return 1
