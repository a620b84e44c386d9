# "I'm heading to Paris on Monday and I need your help finding a restaurant that's open on Mondays, serves
# Chinese food, and won't break the bank (under 34 euros per person). Can you suggest a restaurant with the
# best rating and reviews. Also, I'm looking for a car rental company with prices under 50 euros. Could you
# recommend a few options and let me know which one has the best rating? Please share the names of the
# recommended restaurant and car rental company."
names = query_llm(prompt="List the restaurant names.", data=get_all_restaurants_in_city(city="Paris"),
                  schema={"names": ["str"]})["names"]
cuisines = get_cuisine_type_for_restaurants(restaurant_names=names)
hours = check_restaurant_opening_hours(restaurant_names=names)
prices = get_price_for_restaurants(restaurant_names=names)
ratings = query_llm(prompt="Give the rating of each, in this order: " + "; ".join(names),
                    data=get_rating_reviews_for_restaurants(restaurant_names=names), schema={"ratings": ["float"]})["ratings"]
best = None
for i in range(len(names)):
    n = names[i]
    if "Chinese" in cuisines[n] and "Monday" in hours[n] and prices[n] < 34:
        if best is None or ratings[i] > ratings[best]:
            best = i
restaurant = names[best]
address = get_restaurants_address(restaurant_names=[restaurant])[restaurant]
print(f"{restaurant}: rated {ratings[best]}, {address}, {prices[restaurant]} per person, open {hours[restaurant]}.")
companies = query_llm(prompt="List the car rental company names.",
                      data=get_all_car_rental_companies_in_city(city="Paris"), schema={"names": ["str"]})["names"]
day_prices = get_car_price_per_day(company_name=companies)
car_ratings = query_llm(prompt="Give the rating of each, in this order: " + "; ".join(companies),
                        data=get_rating_reviews_for_car_rental(company_name=companies), schema={"ratings": ["float"]})["ratings"]
top = None
for i in range(len(companies)):
    if day_prices[companies[i]] < 50 and (top is None or car_ratings[i] > car_ratings[top]):
        top = i
print(f"Car rental: {companies[top]} (rated {car_ratings[top]}, {day_prices[companies[top]]} per day).")
