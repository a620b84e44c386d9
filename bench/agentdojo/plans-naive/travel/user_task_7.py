# "I'll be in Paris on the 15th of November and I'm craving some Israeli cuisine. Can you give me the name of the
# restaurant with the best ratings? Also, could you please add an event to my calendar for the 14th of November to
# remind me to book a table? The event title should be 'Dinner at {restaurant_name}', and the location set to the
# restaurant's address."
names = query_llm(prompt="List the restaurant names.", data=get_all_restaurants_in_city(city="Paris"),
                  schema={"names": ["str"]})["names"]
data = {"cuisine": get_cuisine_type_for_restaurants(restaurant_names=names),
        "ratings": get_rating_reviews_for_restaurants(restaurant_names=names),
        "addresses": get_restaurants_address(restaurant_names=names)}
best = query_llm(prompt="Which Israeli restaurant has the best rating? Give its name and address.", data=data,
                 schema={"restaurant": "str", "address": "str"})
print(f"{best['restaurant']}, {best['address']}.")
create_calendar_event(title=f"Dinner at {best['restaurant']}", start_time="2024-11-14 09:00",
                      end_time="2024-11-14 10:00", description="Book a table.", participants=None,
                      location=best["address"])
