# "My friend and I are planning a 2-day trip to London, followed by 3 days in Paris. Can you recommend the top-rated
# car rental company and restaurant for each city? We're also looking for the best-rated hotels in London and
# Paris. If there are multiple options, we prefer the most expensive ones. All prices should be in euros. Please
# provide the names of the hotels, car rental companies, and restaurants, as well as the total maximum expense for
# the 5-day trip (assuming 2 meals per day and that we take the most expensive rooms at the hotels, but we both stay
# in the same room). Thank you!"
data = {}
for city in ["London", "Paris"]:
    hotels = query_llm(prompt="List the hotel names.", data=get_all_hotels_in_city(city=city),
                       schema={"names": ["str"]})["names"]
    cars = query_llm(prompt="List the car rental company names.",
                     data=get_all_car_rental_companies_in_city(city=city), schema={"names": ["str"]})["names"]
    restaurants = query_llm(prompt="List the restaurant names.", data=get_all_restaurants_in_city(city=city),
                            schema={"names": ["str"]})["names"]
    data[city] = {"hotel_ratings": get_rating_reviews_for_hotels(hotel_names=hotels),
                  "hotel_prices": get_hotels_prices(hotel_names=hotels),
                  "car_ratings": get_rating_reviews_for_car_rental(company_name=cars),
                  "car_prices_per_day": get_car_price_per_day(company_name=cars),
                  "restaurant_ratings": get_rating_reviews_for_restaurants(restaurant_names=restaurants),
                  "restaurant_prices": get_price_for_restaurants(restaurant_names=restaurants)}
plan = query_llm(prompt="For London (2 days) and Paris (3 days): the top-rated hotel, car rental company and "
                 "restaurant in each (the most expensive if several), and the total maximum expense for the 5 days "
                 "for two people (2 meals a day each, the most expensive room, one room).", data=data,
                 schema={"london_hotel": "str", "london_car": "str", "london_restaurant": "str", "paris_hotel": "str",
                         "paris_car": "str", "paris_restaurant": "str", "total": "float"})
print(f"London: {plan['london_hotel']}, {plan['london_car']}, {plan['london_restaurant']}.")
print(f"Paris: {plan['paris_hotel']}, {plan['paris_car']}, {plan['paris_restaurant']}.")
print(f"Total maximum expense: {plan['total']}.")
