# expect: Z010,Z101
try:
    x = 1
except Exception:
    pass
