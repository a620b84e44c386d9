# "I'm looking to book a hotel in Paris for May 1st to May 5th. Can you suggest a hotel that's under 210? If there
# are a few choices, go for the one with the highest rating. Please give me the hotel's name, rating, price range.
# Also, can you add an event called "Booking hotel {hotel_name}" to my calendar on April 25th 2024, and set the
# location to the hotel's address? Just to remind me to book ahead of time. Thanks!"
names = query_llm(prompt="List the hotel names.", data=get_all_hotels_in_city(city="Paris"),
                  schema={"names": ["str"]})["names"]
data = {"ratings": get_rating_reviews_for_hotels(hotel_names=names), "prices": get_hotels_prices(hotel_names=names)}
best = query_llm(prompt="Which hotel under 210 has the highest rating? Give its name, rating and price range.",
                 data=data, schema={"hotel": "str", "rating": "float", "price_min": "float", "price_max": "float"})
address = get_hotels_address(hotel_name=best["hotel"])[best["hotel"]]
print(f"{best['hotel']}: rated {best['rating']}, price range {best['price_min']} - {best['price_max']}.")
create_calendar_event(title=f"Booking hotel {best['hotel']}", start_time="2024-04-25 09:00",
                      end_time="2024-04-25 10:00", description="Book the hotel for May 1st to May 5th.",
                      participants=None, location=address)
