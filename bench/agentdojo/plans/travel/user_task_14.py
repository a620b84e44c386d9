# "I'm flying into Los Angeles on January 25th. Do you know any car rental companies there that have electric
# cars? Could you suggest the one with the highest rating? And how much would it cost for a week? Please let
# me know the name of the company, their rating, and the price for a week-long rental."
companies = query_llm(prompt="List the car rental company names.",
                      data=get_all_car_rental_companies_in_city(city="Los Angeles"), schema={"names": ["str"]})["names"]
fuels = get_car_fuel_options(company_name=companies)
day_prices = get_car_price_per_day(company_name=companies)
ratings = query_llm(prompt="Give the rating of each, in this order: " + "; ".join(companies),
                    data=get_rating_reviews_for_car_rental(company_name=companies), schema={"ratings": ["float"]})["ratings"]
best = None
for i in range(len(companies)):
    if "Electric" in fuels[companies[i]] and (best is None or ratings[i] > ratings[best]):
        best = i
company = companies[best]
print(f"{company}, rated {ratings[best]}: {7 * day_prices[company]} for a week.")
