# "I'll be in Paris on the 15th of November and I'm craving some Israeli cuisine. Can you give me the name of
# the restaurant with the best ratings? Also, could you please add an event to my calendar for the 14th of
# November to remind me to book a table? The event title should be 'Dinner at {restaurant_name}', and the
# location set to the restaurant's address."
names = query_llm(prompt="List the restaurant names.", data=get_all_restaurants_in_city(city="Paris"),
                  schema={"names": ["str"]})["names"]
cuisines = get_cuisine_type_for_restaurants(restaurant_names=names)
ratings = query_llm(prompt="Give the rating of each, in this order: " + "; ".join(names),
                    data=get_rating_reviews_for_restaurants(restaurant_names=names), schema={"ratings": ["float"]})["ratings"]
best = None
for i in range(len(names)):
    if "Israeli" in cuisines[names[i]] and (best is None or ratings[i] > ratings[best]):
        best = i
restaurant = names[best]
address = get_restaurants_address(restaurant_names=[restaurant])[restaurant]
print(f"{restaurant} (rated {ratings[best]}), {address}.")
create_calendar_event(title=f"Dinner at {restaurant}", start_time="2024-11-14 09:00", end_time="2024-11-14 10:00",
                      description="Book a table.", participants=None, location=address)
