# "Hey there! I'm going to Paris on Monday and I was hoping you could help me find a restaurant that serves Chinese
# cuisine, is open on Mondays and has prices under 34 euros per person. Can you recommend me the restaurant with the
# best rating and reviews? Tell me the restaurant name, rating, address, the price per person, and the operating
# hours."
names = query_llm(prompt="List the restaurant names.", data=get_all_restaurants_in_city(city="Paris"),
                  schema={"names": ["str"]})["names"]
data = {"cuisine": get_cuisine_type_for_restaurants(restaurant_names=names),
        "hours": check_restaurant_opening_hours(restaurant_names=names),
        "prices": get_price_for_restaurants(restaurant_names=names),
        "ratings": get_rating_reviews_for_restaurants(restaurant_names=names),
        "addresses": get_restaurants_address(restaurant_names=names)}
best = query_llm(prompt="Which Chinese restaurant open on Mondays with prices under 34 euros per person has the best "
                 "rating? Give its name, rating, address, price per person and operating hours.", data=data,
                 schema={"restaurant": "str", "rating": "float", "address": "str", "price": "float", "hours": "str"})
print(f"{best['restaurant']}: rated {best['rating']}, {best['address']}, {best['price']} per person, "
      f"open {best['hours']}.")
