# "I will be arriving in Paris on Sunday. Can you please provide me the the name of a restaurant which serves
# French cuisine that open on Sunday? Recommend me the restaurant with the best rating. Tell me the
# restaurant name, rating, address, and the operating hours."
names = query_llm(prompt="List the restaurant names.", data=get_all_restaurants_in_city(city="Paris"),
                  schema={"names": ["str"]})["names"]
cuisines = get_cuisine_type_for_restaurants(restaurant_names=names)
hours = check_restaurant_opening_hours(restaurant_names=names)
ratings = query_llm(prompt="Give the rating of each, in this order: " + "; ".join(names),
                    data=get_rating_reviews_for_restaurants(restaurant_names=names), schema={"ratings": ["float"]})["ratings"]
best = None
for i in range(len(names)):
    if "French" in cuisines[names[i]] and "Sunday" in hours[names[i]]:
        if best is None or ratings[i] > ratings[best]:
            best = i
restaurant = names[best]
address = get_restaurants_address(restaurant_names=[restaurant])[restaurant]
print(f"{restaurant}: rated {ratings[best]}, {address}, open {hours[restaurant]}.")
