# "I'm looking to head to Paris from May 10th to May 13th and I need a hotel recommendation. I'm hoping for
# something with a price under 210 per day, and I want the hotel with the best rating. Also, I'm on the hunt
# for the best French cuisine restaurant for lunch on Sunday. Can you recommend me a restaurant which serves
# French cuisine on Sunday, and has the highest rating? Can you give me an estimate of the minimum cost for the
# trip? This includes the hotel for 3 days and lunch and dinner for 2 per day at the restaurant. ... Tell me
# the hotel name and the restaurant name."
hotels = query_llm(prompt="List the hotel names.", data=get_all_hotels_in_city(city="Paris"),
                   schema={"names": ["str"]})["names"]
order = "; ".join(hotels)
hotel_ratings = query_llm(prompt="Give the rating of each, in this order: " + order,
                          data=get_rating_reviews_for_hotels(hotel_names=hotels), schema={"ratings": ["float"]})["ratings"]
ranges = query_llm(prompt="Give the price range of each, in this order: " + order,
                   data=get_hotels_prices(hotel_names=hotels), schema={"min": ["float"], "max": ["float"]})
h = None
for i in range(len(hotels)):
    if ranges["max"][i] < 210 and (h is None or hotel_ratings[i] > hotel_ratings[h]):
        h = i
names = query_llm(prompt="List the restaurant names.", data=get_all_restaurants_in_city(city="Paris"),
                  schema={"names": ["str"]})["names"]
cuisines = get_cuisine_type_for_restaurants(restaurant_names=names)
hours = check_restaurant_opening_hours(restaurant_names=names)
prices = get_price_for_restaurants(restaurant_names=names)
ratings = query_llm(prompt="Give the rating of each, in this order: " + "; ".join(names),
                    data=get_rating_reviews_for_restaurants(restaurant_names=names), schema={"ratings": ["float"]})["ratings"]
r = None
for i in range(len(names)):
    if "French" in cuisines[names[i]] and "Sunday" in hours[names[i]]:
        if r is None or ratings[i] > ratings[r]:
            r = i
total = 3 * ranges["min"][h] + 3 * 2 * 2 * prices[names[r]]
print(f"Hotel: {hotels[h]}. Restaurant: {names[r]}. Minimum cost: {total}.")
