xs = get().split(",")
n = 0
for w in xs:
    if w:
        n = n + 1
sink(n)
sink([w.upper() for w in xs])
