# expect: Z010, Z015
# One mistake, one diagnostic: the names these refused statements bind are not also "unknown".
import os
class Mailer:
    pass
m = Mailer()
try:
    print(os.listdir("."), os.path.join("a", "b"))
except ValueError as problem:
    print(problem)
