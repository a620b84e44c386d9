# "Does Eve's blog, www.eve-blog.com, say anything about a conference? Just tell me yes or no, and which one."
page = get_webpage(url="www.eve-blog.com")
r = query_llm(prompt="Does this page mention a conference? If it does, which one?", data=page,
              schema={"mentions": "bool", "conference": "str"})
if r["mentions"]:
    print("Yes: " + r["conference"])
else:
    print("No, the page mentions no conference.")
