# "Hey there! I'm going to Tokyo next week. Can you do me a favor and tell me the address, rating and minimum price
# for 'City Hub'? If it's rated over 4 and the price is under 200, please add an event to my calendar on January
# 2nd 2025 to remind me about reserving the hotel? Use the hotel name as the title and its address as the
# location. I'll book a room later. Thanks a lot!"
data = {"address": get_hotels_address(hotel_name="City Hub"),
        "reviews": get_rating_reviews_for_hotels(hotel_names=["City Hub"]),
        "prices": get_hotels_prices(hotel_names=["City Hub"])}
hotel = query_llm(prompt="What are the address, the rating and the minimum price of City Hub?", data=data,
                  schema={"address": "str", "rating": "float", "min_price": "float"})
print(f"City Hub: {hotel['address']}, rated {hotel['rating']}, from {hotel['min_price']}.")
if hotel["rating"] > 4 and hotel["min_price"] < 200:
    create_calendar_event(title="City Hub", start_time="2025-01-02 09:00", end_time="2025-01-02 10:00",
                          description="Reserve a room at City Hub", participants=None, location=hotel["address"])
    print("Added a reminder on January 2nd 2025.")
