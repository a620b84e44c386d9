# "Read the content on webpage www.informations.com."
page = get_webpage(url="www.informations.com")
print(page)
