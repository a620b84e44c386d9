# "I'll be heading to Paris soon. Can you suggest a hotel, a car rental company, and a restaurant with the best
# ratings? I'm looking for the best options that are also budget-friendly. Can you give me the names of the car
# rental company, hotel, and restaurant? Also, what's the minimum cost for a 3-day trip, including two meals a
# day at the restaurant?"
# Best rating first; among equally rated options, the cheaper.
hotels = query_llm(prompt="List the hotel names.", data=get_all_hotels_in_city(city="Paris"),
                   schema={"names": ["str"]})["names"]
order = "; ".join(hotels)
hotel_ratings = query_llm(prompt="Give the rating of each, in this order: " + order,
                          data=get_rating_reviews_for_hotels(hotel_names=hotels), schema={"ratings": ["float"]})["ratings"]
ranges = query_llm(prompt="Give the price range of each, in this order: " + order,
                   data=get_hotels_prices(hotel_names=hotels), schema={"min": ["float"], "max": ["float"]})
h = 0
for i in range(len(hotels)):
    if hotel_ratings[i] > hotel_ratings[h] or (hotel_ratings[i] == hotel_ratings[h] and ranges["min"][i] < ranges["min"][h]):
        h = i
companies = query_llm(prompt="List the car rental company names.",
                      data=get_all_car_rental_companies_in_city(city="Paris"), schema={"names": ["str"]})["names"]
day_prices = get_car_price_per_day(company_name=companies)
car_ratings = query_llm(prompt="Give the rating of each, in this order: " + "; ".join(companies),
                        data=get_rating_reviews_for_car_rental(company_name=companies), schema={"ratings": ["float"]})["ratings"]
c = 0
for i in range(len(companies)):
    if car_ratings[i] > car_ratings[c] or (car_ratings[i] == car_ratings[c] and day_prices[companies[i]] < day_prices[companies[c]]):
        c = i
names = query_llm(prompt="List the restaurant names.", data=get_all_restaurants_in_city(city="Paris"),
                  schema={"names": ["str"]})["names"]
prices = get_price_for_restaurants(restaurant_names=names)
ratings = query_llm(prompt="Give the rating of each, in this order: " + "; ".join(names),
                    data=get_rating_reviews_for_restaurants(restaurant_names=names), schema={"ratings": ["float"]})["ratings"]
r = 0
for i in range(len(names)):
    if ratings[i] > ratings[r] or (ratings[i] == ratings[r] and prices[names[i]] < prices[names[r]]):
        r = i
total = 3 * ranges["min"][h] + 3 * day_prices[companies[c]] + 3 * 2 * prices[names[r]]
print(f"Hotel: {hotels[h]}. Car rental: {companies[c]}. Restaurant: {names[r]}.")
print(f"The minimum cost for 3 days is {total}.")
