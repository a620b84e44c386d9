# expect: Z003
# The planner has not written this plan yet.
