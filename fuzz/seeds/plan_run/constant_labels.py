t = 0
parts = []
for i in range(5):
    t = t + i * 2
    if i % 2 == 0:
        parts.append(str(i))
    elif t > 3:
        t = t - 1
k = get()
if len(k) > 3:
    t = 9
for j in range(t):
    sink(j)
sink(t)
sink(parts)
