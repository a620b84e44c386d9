def f(v, k=2):
    return v * k
d = {"k": get(), "n": 3}
ys = sorted([3, 1, 2], key=lambda z: -z)
sink(f(d["n"]))
sink(ys)
print(f"{d['n']}:{ys}")
