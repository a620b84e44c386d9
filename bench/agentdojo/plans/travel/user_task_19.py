# "My friend and I are planning a 2-day trip to London, followed by 3 days in Paris. Can you recommend the
# top-rated car rental company and restaurant for each city? We're also looking for the best-rated hotels in
# London and Paris. If there are multiple options, we prefer the most expensive ones. All prices should be in
# euros. Please provide the names of the hotels, car rental companies, and restaurants, as well as the total
# maximum expense for the 5-day trip (assuming 2 meals per day and that we take the most expensive rooms at the
# hotels, but we both stay in the same room)."
def top(names, ratings, prices):
    best = 0
    for i in range(len(names)):
        if ratings[i] > ratings[best] or (ratings[i] == ratings[best] and prices[i] > prices[best]):
            best = i
    return best


def city_plan(city, days):
    hotels = query_llm(prompt="List the hotel names.", data=get_all_hotels_in_city(city=city),
                       schema={"names": ["str"]})["names"]
    order = "; ".join(hotels)
    hotel_ratings = query_llm(prompt="Give the rating of each, in this order: " + order,
                              data=get_rating_reviews_for_hotels(hotel_names=hotels), schema={"ratings": ["float"]})["ratings"]
    ranges = query_llm(prompt="Give the price range of each, in this order: " + order,
                       data=get_hotels_prices(hotel_names=hotels), schema={"min": ["float"], "max": ["float"]})
    h = top(hotels, hotel_ratings, ranges["max"])
    companies = query_llm(prompt="List the car rental company names.",
                          data=get_all_car_rental_companies_in_city(city=city), schema={"names": ["str"]})["names"]
    day_prices = get_car_price_per_day(company_name=companies)
    car_ratings = query_llm(prompt="Give the rating of each, in this order: " + "; ".join(companies),
                            data=get_rating_reviews_for_car_rental(company_name=companies), schema={"ratings": ["float"]})["ratings"]
    c = top(companies, car_ratings, [day_prices[n] for n in companies])
    names = query_llm(prompt="List the restaurant names.", data=get_all_restaurants_in_city(city=city),
                      schema={"names": ["str"]})["names"]
    prices = get_price_for_restaurants(restaurant_names=names)
    ratings = query_llm(prompt="Give the rating of each, in this order: " + "; ".join(names),
                        data=get_rating_reviews_for_restaurants(restaurant_names=names), schema={"ratings": ["float"]})["ratings"]
    r = top(names, ratings, [prices[n] for n in names])
    cost = days * ranges["max"][h] + days * day_prices[companies[c]] + days * 2 * 2 * prices[names[r]]
    print(f"{city}: hotel {hotels[h]}, car rental {companies[c]}, restaurant {names[r]}.")
    return cost


total = city_plan("London", 2) + city_plan("Paris", 3)
print(f"The total maximum expense for the 5-day trip is {total}.")
