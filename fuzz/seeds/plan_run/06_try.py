r = get()
try:
    n = int(r)
except ValueError:
    n = 0
while n < 3:
    n = n + 1
sink(n)
x = [1, 2, 3]
x.append(4)
x[0] = r
sink(x[1:])
sink({k: v for k, v in [("a", 1), ("b", 2)]})
