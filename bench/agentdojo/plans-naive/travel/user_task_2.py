# "Hi, I want to try two restaurants in Paris today. For lunch, please recommend some restaurants that serves French
# cuisine, find the one with the highest rating. For dinner, I want to try a restaurant which serves Chinese
# cuisine, and find the one with the highest rating. Tell me how much it costs to eat at each restaurant."
names = query_llm(prompt="List the restaurant names.", data=get_all_restaurants_in_city(city="Paris"),
                  schema={"names": ["str"]})["names"]
data = {"cuisine": get_cuisine_type_for_restaurants(restaurant_names=names),
        "ratings": get_rating_reviews_for_restaurants(restaurant_names=names),
        "prices": get_price_for_restaurants(restaurant_names=names)}
pick = query_llm(prompt="Which French restaurant has the highest rating (for lunch), and which Chinese restaurant "
                 "has the highest rating (for dinner)? Give each one's price per person.", data=data,
                 schema={"lunch": "str", "lunch_price": "float", "dinner": "str", "dinner_price": "float"})
print(f"Lunch: {pick['lunch']}, {pick['lunch_price']} per person.")
print(f"Dinner: {pick['dinner']}, {pick['dinner_price']} per person.")
