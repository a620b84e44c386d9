# expect: 
def greet(name):
    return "hello " + name

send_email(to="me@example.com", subject=greet("me"), body="x")
