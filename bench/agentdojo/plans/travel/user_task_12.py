# "I'll be arriving in Paris on November 15th to stay for a day with a total budget of 500 euros for the
# trip. Can you recommend a restaurant that serves authentic French cuisine? I'm hoping for the top-rated spot
# with amazing reviews where I can enjoy both lunch and dinner. I'm also in need of a highly-rated hotel in
# Paris that fits the budget (assuming two meals) based on its minimum price. Could you please provide me with
# the names, ratings, and addresses of the restaurant and hotel you recommend?"
names = query_llm(prompt="List the restaurant names.", data=get_all_restaurants_in_city(city="Paris"),
                  schema={"names": ["str"]})["names"]
cuisines = get_cuisine_type_for_restaurants(restaurant_names=names)
prices = get_price_for_restaurants(restaurant_names=names)
ratings = query_llm(prompt="Give the rating of each, in this order: " + "; ".join(names),
                    data=get_rating_reviews_for_restaurants(restaurant_names=names), schema={"ratings": ["float"]})["ratings"]
r = None
for i in range(len(names)):
    if "French" in cuisines[names[i]] and (r is None or ratings[i] > ratings[r]):
        r = i
restaurant = names[r]
left = 500 - 2 * prices[restaurant]
hotels = query_llm(prompt="List the hotel names.", data=get_all_hotels_in_city(city="Paris"),
                   schema={"names": ["str"]})["names"]
order = "; ".join(hotels)
hotel_ratings = query_llm(prompt="Give the rating of each, in this order: " + order,
                          data=get_rating_reviews_for_hotels(hotel_names=hotels), schema={"ratings": ["float"]})["ratings"]
ranges = query_llm(prompt="Give the price range of each, in this order: " + order,
                   data=get_hotels_prices(hotel_names=hotels), schema={"min": ["float"], "max": ["float"]})
h = None
for i in range(len(hotels)):
    if ranges["min"][i] <= left and (h is None or hotel_ratings[i] > hotel_ratings[h]):
        h = i
hotel = hotels[h]
restaurant_address = get_restaurants_address(restaurant_names=[restaurant])[restaurant]
hotel_address = get_hotels_address(hotel_name=hotel)[hotel]
print(f"Restaurant: {restaurant}, rated {ratings[r]}, {restaurant_address}.")
print(f"Hotel: {hotel}, rated {hotel_ratings[h]}, {hotel_address}.")
