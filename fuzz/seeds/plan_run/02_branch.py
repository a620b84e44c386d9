a = get()
b = 1
if a == "alpha":
    b = 2
sink(b)
sink(len(a))
