# expect: Z017
x = "%s" % "a"
