# "Hi, I am planning a trip to Paris and London, and I want to book a hotel in Paris and a hotel in London. I have a
# budget of 500 per day for each hotel, and please recommend me the hotel with the highest rating in Paris and
# London. The trip is for 5 days, from the 1st of January to the 5th of January. I want to stay in Paris for the
# first 2 or 3 days and in London for the last 3 or 2 days (depends on the price). Tell me the hotel names, the
# minimal prices for each hotel, and the minimum expense for the 5-day trip."
data = {}
for city in ["Paris", "London"]:
    names = query_llm(prompt="List the hotel names.", data=get_all_hotels_in_city(city=city),
                      schema={"names": ["str"]})["names"]
    data[city] = {"ratings": get_rating_reviews_for_hotels(hotel_names=names),
                  "prices": get_hotels_prices(hotel_names=names)}
plan = query_llm(prompt="With a budget of 500 per day for each hotel, which hotel has the highest rating in Paris, "
                 "and which in London? Give each one's minimal price, and the minimum expense for 5 days: 2 or 3 "
                 "days in Paris and the rest in London.", data=data,
                 schema={"paris_hotel": "str", "paris_min_price": "float", "london_hotel": "str",
                         "london_min_price": "float", "minimum_expense": "float"})
print(f"Paris: {plan['paris_hotel']} (from {plan['paris_min_price']}); London: {plan['london_hotel']} "
      f"(from {plan['london_min_price']}). Minimum expense for the 5 days: {plan['minimum_expense']}.")
