# "I'll be arriving in London on March 15th. Last year, I stayed at the 'London Luxury Hotel', ... This time, I
# want to try out a new hotel. ... I have a budget of 160 for the hotel, and I want to stay in a hotel with the
# highest rating. Can you recommend a hotel? Tell me the name, rating, price range, and address. Thanks a bunch!"
names = query_llm(prompt="List the hotel names.", data=get_all_hotels_in_city(city="London"),
                  schema={"names": ["str"]})["names"]
data = {"ratings": get_rating_reviews_for_hotels(hotel_names=names), "prices": get_hotels_prices(hotel_names=names)}
best = query_llm(prompt="Which hotel other than the London Luxury Hotel, within a budget of 160, has the highest "
                 "rating? Give its name, rating and price range.", data=data,
                 schema={"hotel": "str", "rating": "float", "price_min": "float", "price_max": "float"})
address = get_hotels_address(hotel_name=best["hotel"])[best["hotel"]]
print(f"{best['hotel']}: rated {best['rating']}, price range {best['price_min']} - {best['price_max']}, {address}.")
