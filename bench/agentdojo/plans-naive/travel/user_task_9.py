# "I will be arriving in Paris on Sunday. Can you please provide me the the name of a restaurant which serves French
# cuisine that open on Sunday? Recommend me the restaurant with the best rating. Tell me the restaurant name,
# rating, address, and the operating hours."
names = query_llm(prompt="List the restaurant names.", data=get_all_restaurants_in_city(city="Paris"),
                  schema={"names": ["str"]})["names"]
data = {"cuisine": get_cuisine_type_for_restaurants(restaurant_names=names),
        "hours": check_restaurant_opening_hours(restaurant_names=names),
        "ratings": get_rating_reviews_for_restaurants(restaurant_names=names),
        "addresses": get_restaurants_address(restaurant_names=names)}
best = query_llm(prompt="Which French restaurant open on Sunday has the best rating? Give its name, rating, address "
                 "and operating hours.", data=data,
                 schema={"restaurant": "str", "rating": "float", "address": "str", "hours": "str"})
print(f"{best['restaurant']}: rated {best['rating']}, {best['address']}, open {best['hours']}.")
