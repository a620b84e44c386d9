# expect: Z107
f = send_email
