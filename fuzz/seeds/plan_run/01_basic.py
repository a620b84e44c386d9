x = get()
sink(x)
sink("literal")
