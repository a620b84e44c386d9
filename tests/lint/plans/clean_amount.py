# expect: 
pay(to="me@example.com", amount=verify_amount(int("12")))
