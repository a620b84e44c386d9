# "I'll be arriving in London on March 15th. Last year, I stayed at the 'London Luxury Hotel' ... This time,
# I want to try out a new hotel. ... I have a budget of 160 for the hotel, and I want to stay in a hotel with
# the highest rating. Can you recommend a hotel? Tell me the name, rating, price range, and address."
names = query_llm(prompt="List the hotel names.", data=get_all_hotels_in_city(city="London"),
                  schema={"names": ["str"]})["names"]
order = "; ".join(names)
ratings = query_llm(prompt="Give the rating of each, in this order: " + order,
                    data=get_rating_reviews_for_hotels(hotel_names=names), schema={"ratings": ["float"]})["ratings"]
prices = query_llm(prompt="Give the price range of each, in this order: " + order,
                   data=get_hotels_prices(hotel_names=names), schema={"min": ["float"], "max": ["float"]})
best = None
for i in range(len(names)):
    new = not names[i].startswith("London Luxury")
    if new and prices["max"][i] <= 160 and (best is None or ratings[i] > ratings[best]):
        best = i
hotel = names[best]
address = get_hotels_address(hotel_name=hotel)[hotel]
print(f"{hotel}: rated {ratings[best]}, price range {prices['min'][best]} - {prices['max'][best]}, {address}.")
