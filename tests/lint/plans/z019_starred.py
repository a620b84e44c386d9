# expect: Z019
def f(*args):
    return 1
