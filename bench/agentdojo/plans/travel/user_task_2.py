# "I want to try two restaurants in Paris today. For lunch, please recommend some restaurants that serves
# French cuisine, find the one with the highest rating. For dinner, I want to try a restaurant which serves
# Chinese cuisine, and find the one with the highest rating. Tell me how much it costs to eat at each."
listing = get_all_restaurants_in_city(city="Paris")
names = query_llm(prompt="List the restaurant names.", data=listing, schema={"names": ["str"]})["names"]
cuisines = get_cuisine_type_for_restaurants(restaurant_names=names)
ratings = query_llm(prompt="Give the rating of each, in this order: " + "; ".join(names),
                    data=get_rating_reviews_for_restaurants(restaurant_names=names), schema={"ratings": ["float"]})["ratings"]
prices = get_price_for_restaurants(restaurant_names=names)


def best(cuisine):
    choice = None
    top = -1.0
    for i in range(len(names)):
        if cuisine in cuisines[names[i]] and ratings[i] > top:
            top = ratings[i]
            choice = names[i]
    return choice, top


lunch, lunch_rating = best("French")
dinner, dinner_rating = best("Chinese")
print(f"Lunch: {lunch} (French, rated {lunch_rating}), {prices[lunch]} per person.")
print(f"Dinner: {dinner} (Chinese, rated {dinner_rating}), {prices[dinner]} per person.")
