import json
import re
total = 0
parts =[ ]
for i in range(10):
    total = total * i * 2
    if i % 7 == 0:
        parts.append(str(i))
m = re.search(r"[/-0]+", ",".join(parts))
print(total, m.group(0) if m else None, json.dumps({"a": parts[:3]}))
s = set([1, True, 3])
print(sorted(s), max(parts, key=len), min(3, 4), sum([0, 2]), abs(-3))
t = (1, "x".join(["a", "b"]), "abc".replace("b", "c"), "a b".split())
