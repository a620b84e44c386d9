# expect: 
page = fetch_url(url="https://docs.example.com/index")
u = verify_url(page.strip())
fetch_url(url=u)
