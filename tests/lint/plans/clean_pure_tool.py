# expect: 
e = get_email(id="1")
n = word_count(text=e["body"])
print(n)
