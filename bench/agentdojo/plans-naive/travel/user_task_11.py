# "Hey there! I'm looking to head to Paris from May 10th to May 13th and I need a hotel recommendation. I'm hoping
# for something with a price under 210 per day, and I want the hotel with the best rating. Also, I'm on the hunt for
# the best French cuisine restaurant for lunch on Sunday. ... Can you give me an estimate of the minimum cost for the
# trip? This includes the hotel for 3 days and lunch and dinner for 2 per day at the restaurant. ... Tell me the
# hotel name and the restaurant name. Thanks in advance."
hotels = query_llm(prompt="List the hotel names.", data=get_all_hotels_in_city(city="Paris"),
                   schema={"names": ["str"]})["names"]
restaurants = query_llm(prompt="List the restaurant names.", data=get_all_restaurants_in_city(city="Paris"),
                        schema={"names": ["str"]})["names"]
data = {"hotel_ratings": get_rating_reviews_for_hotels(hotel_names=hotels),
        "hotel_prices": get_hotels_prices(hotel_names=hotels),
        "cuisine": get_cuisine_type_for_restaurants(restaurant_names=restaurants),
        "hours": check_restaurant_opening_hours(restaurant_names=restaurants),
        "restaurant_ratings": get_rating_reviews_for_restaurants(restaurant_names=restaurants),
        "restaurant_prices": get_price_for_restaurants(restaurant_names=restaurants)}
plan = query_llm(prompt="Which hotel under 210 per day has the best rating, and which French restaurant open on "
                 "Sunday has the highest rating? Estimate the minimum cost of the trip: the hotel for 3 days, and "
                 "lunch and dinner for 2 people per day at the restaurant.", data=data,
                 schema={"hotel": "str", "restaurant": "str", "minimum_cost": "float"})
print(f"Hotel: {plan['hotel']}. Restaurant: {plan['restaurant']}. Minimum cost: {plan['minimum_cost']}.")
