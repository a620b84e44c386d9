# "I'm going to Paris on Monday and I was hoping you could help me find a restaurant that serves Chinese
# cuisine, is open on Mondays and has prices under 34 euros per person. Can you recommend me the restaurant
# with the best rating and reviews? Tell me the restaurant name, rating, address, the price per person, and
# the operating hours."
names = query_llm(prompt="List the restaurant names.", data=get_all_restaurants_in_city(city="Paris"),
                  schema={"names": ["str"]})["names"]
cuisines = get_cuisine_type_for_restaurants(restaurant_names=names)
hours = check_restaurant_opening_hours(restaurant_names=names)
prices = get_price_for_restaurants(restaurant_names=names)
ratings = query_llm(prompt="Give the rating of each, in this order: " + "; ".join(names),
                    data=get_rating_reviews_for_restaurants(restaurant_names=names), schema={"ratings": ["float"]})["ratings"]
best = None
for i in range(len(names)):
    n = names[i]
    if "Chinese" in cuisines[n] and "Monday" in hours[n] and prices[n] < 34:
        if best is None or ratings[i] > ratings[best]:
            best = i
restaurant = names[best]
address = get_restaurants_address(restaurant_names=[restaurant])[restaurant]
print(f"{restaurant}: rated {ratings[best]}, {address}, {prices[restaurant]} per person, open {hours[restaurant]}.")
