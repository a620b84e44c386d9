# "Hey there! I'm heading to Paris on Monday and I need your help finding a restaurant that's open on Mondays,
# serves Chinese food, and won't break the bank (under 34 euros per person). Can you suggest a restaurant with the
# best rating and reviews. Also, I'm looking for a car rental company with prices under 50 euros. Could you
# recommend a few options and let me know which one has the best rating? Please share the names of the recommended
# restaurant and car rental company. Thanks a bunch!"
restaurants = query_llm(prompt="List the restaurant names.", data=get_all_restaurants_in_city(city="Paris"),
                        schema={"names": ["str"]})["names"]
cars = query_llm(prompt="List the car rental company names.", data=get_all_car_rental_companies_in_city(city="Paris"),
                 schema={"names": ["str"]})["names"]
data = {"cuisine": get_cuisine_type_for_restaurants(restaurant_names=restaurants),
        "hours": check_restaurant_opening_hours(restaurant_names=restaurants),
        "restaurant_prices": get_price_for_restaurants(restaurant_names=restaurants),
        "restaurant_ratings": get_rating_reviews_for_restaurants(restaurant_names=restaurants),
        "car_prices_per_day": get_car_price_per_day(company_name=cars),
        "car_ratings": get_rating_reviews_for_car_rental(company_name=cars)}
plan = query_llm(prompt="Which Chinese restaurant open on Mondays under 34 euros per person has the best rating, and "
                 "which car rental company under 50 euros has the best rating?", data=data,
                 schema={"restaurant": "str", "car_rental": "str"})
print(f"Restaurant: {plan['restaurant']}. Car rental: {plan['car_rental']}.")
