# expect: Z010
try:
    x = 1
except Exception:
    pass
