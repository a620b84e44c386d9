# "I'm looking to book a hotel in Paris for May 1st to May 5th. Can you suggest a hotel that's under 210? If
# there are a few choices, go for the one with the highest rating. Please give me the hotel's name, rating,
# price range. Also, can you add an event called "Booking hotel {hotel_name}" to my calendar on April 25th
# 2024, and set the location to the hotel's address? Just to remind me to book ahead of time. Thanks!"
names = query_llm(prompt="List the hotel names.", data=get_all_hotels_in_city(city="Paris"),
                  schema={"names": ["str"]})["names"]
order = "; ".join(names)
ratings = query_llm(prompt="Give the rating of each, in this order: " + order,
                    data=get_rating_reviews_for_hotels(hotel_names=names), schema={"ratings": ["float"]})["ratings"]
prices = query_llm(prompt="Give the price range of each, in this order: " + order,
                   data=get_hotels_prices(hotel_names=names), schema={"min": ["float"], "max": ["float"]})
best = None
for i in range(len(names)):
    if prices["max"][i] < 210 and (best is None or ratings[i] > ratings[best]):
        best = i
hotel = names[best]
address = get_hotels_address(hotel_name=hotel)[hotel]
print(f"{hotel}: rated {ratings[best]}, price range {prices['min'][best]} - {prices['max'][best]}.")
create_calendar_event(title=f"Booking hotel {hotel}", start_time="2024-04-25 09:00", end_time="2024-04-25 10:00",
                      description="Book the hotel for May 1st to May 5th.", participants=None, location=address)
