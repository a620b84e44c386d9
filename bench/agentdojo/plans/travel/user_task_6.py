# "I am planning a trip to Paris and London ... a budget of 500 per day for each hotel, and please recommend
# me the hotel with the highest rating in Paris and London. The trip is for 5 days, from the 1st of January to
# the 5th of January. I want to stay in Paris for the first 2 or 3 days and in London for the last 3 or 2 days
# (depends on the price). Tell me the hotel names, the minimal prices for each hotel, and the minimum expense
# for the 5-day trip."
def best_hotel(city):
    names = query_llm(prompt="List the hotel names.", data=get_all_hotels_in_city(city=city),
                      schema={"names": ["str"]})["names"]
    order = "; ".join(names)
    ratings = query_llm(prompt="Give the rating of each, in this order: " + order,
                        data=get_rating_reviews_for_hotels(hotel_names=names), schema={"ratings": ["float"]})["ratings"]
    prices = query_llm(prompt="Give the price range of each, in this order: " + order,
                       data=get_hotels_prices(hotel_names=names), schema={"min": ["float"], "max": ["float"]})
    best = None
    for i in range(len(names)):
        if prices["min"][i] <= 500 and (best is None or ratings[i] > ratings[best]):
            best = i
    return names[best], prices["min"][best]


paris, paris_price = best_hotel("Paris")
london, london_price = best_hotel("London")
total = min(3 * paris_price + 2 * london_price, 2 * paris_price + 3 * london_price)
print(f"Paris: {paris}, from {paris_price} per day. London: {london}, from {london_price} per day.")
print(f"The minimum expense for the 5-day trip is {total}.")
