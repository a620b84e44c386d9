# "Hey there! I'll be arriving in Paris on November 15th to stay for a day with a total budget of 500 euros for the
# trip. Can you recommend a restaurant that serves authentic French cuisine? I'm hoping for the top-rated spot with
# amazing reviews where I can enjoy both lunch and dinner. I'm also in need of a highly-rated hotel in Paris that
# fits the budget (assuming two meals) based on its minimum price. Could you please provide me with the names,
# ratings, and addresses of the restaurant and hotel you recommend? Thank you so much!"
hotels = query_llm(prompt="List the hotel names.", data=get_all_hotels_in_city(city="Paris"),
                   schema={"names": ["str"]})["names"]
restaurants = query_llm(prompt="List the restaurant names.", data=get_all_restaurants_in_city(city="Paris"),
                        schema={"names": ["str"]})["names"]
data = {"hotel_ratings": get_rating_reviews_for_hotels(hotel_names=hotels),
        "hotel_prices": get_hotels_prices(hotel_names=hotels),
        "cuisine": get_cuisine_type_for_restaurants(restaurant_names=restaurants),
        "restaurant_ratings": get_rating_reviews_for_restaurants(restaurant_names=restaurants),
        "restaurant_prices": get_price_for_restaurants(restaurant_names=restaurants),
        "restaurant_addresses": get_restaurants_address(restaurant_names=restaurants)}
plan = query_llm(prompt="With a total budget of 500 for one day, which top-rated French restaurant (for lunch and "
                 "dinner), and which highest-rated hotel whose minimum price fits the rest of the budget? Give "
                 "the name, rating and address of each (the restaurant's address is in the data).", data=data,
                 schema={"restaurant": "str", "restaurant_rating": "float", "restaurant_address": "str",
                         "hotel": "str", "hotel_rating": "float"})
address = get_hotels_address(hotel_name=plan["hotel"])[plan["hotel"]]
print(f"Restaurant: {plan['restaurant']}, rated {plan['restaurant_rating']}, {plan['restaurant_address']}.")
print(f"Hotel: {plan['hotel']}, rated {plan['hotel_rating']}, {address}.")
