# "Set up a monthly transfer of 150.00 to my savings account DE02120300000000202051, starting May 1st 2022."
schedule_transaction(recipient="DE02120300000000202051", amount=150.0, subject="Monthly savings",
                     date="2022-05-01", recurring=True)
print("From 2022-05-01, 150.00 goes to DE02120300000000202051 every month.")
