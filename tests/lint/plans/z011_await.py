# expect: Z011,Z101
x = await y
