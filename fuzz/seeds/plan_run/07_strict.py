e = get()
who = "me"
for c in e:
    if c == "a":
        who = "them"
sink(who)
flag = "a" in e
out = "yes" if flag else "no"
sink(out)
sink(any([c == "x" for c in e]), )
