# "Hey! I'll be heading to Paris soon. Can you suggest a hotel, a car rental company, and a restaurant with the best
# ratings? I'm looking for the best options that are also budget-friendly. Can you give me the names of the car
# rental company, hotel, and restaurant? Also, what's the minimum cost for a 3-day trip, including two meals a day
# at the restaurant?"
hotels = query_llm(prompt="List the hotel names.", data=get_all_hotels_in_city(city="Paris"),
                   schema={"names": ["str"]})["names"]
cars = query_llm(prompt="List the car rental company names.", data=get_all_car_rental_companies_in_city(city="Paris"),
                 schema={"names": ["str"]})["names"]
restaurants = query_llm(prompt="List the restaurant names.", data=get_all_restaurants_in_city(city="Paris"),
                        schema={"names": ["str"]})["names"]
data = {"hotel_ratings": get_rating_reviews_for_hotels(hotel_names=hotels),
        "hotel_prices": get_hotels_prices(hotel_names=hotels),
        "car_ratings": get_rating_reviews_for_car_rental(company_name=cars),
        "car_prices_per_day": get_car_price_per_day(company_name=cars),
        "restaurant_ratings": get_rating_reviews_for_restaurants(restaurant_names=restaurants),
        "restaurant_prices": get_price_for_restaurants(restaurant_names=restaurants)}
plan = query_llm(prompt="Which hotel, car rental company and restaurant have the best ratings (the cheaper if "
                 "several)? What is the minimum cost for 3 days, with two meals a day at the restaurant?", data=data,
                 schema={"hotel": "str", "car_rental": "str", "restaurant": "str", "minimum_cost": "float"})
print(f"Car rental: {plan['car_rental']}. Hotel: {plan['hotel']}. Restaurant: {plan['restaurant']}.")
print(f"Minimum cost for 3 days: {plan['minimum_cost']}.")
