# "I'm flying into Los Angeles on January 25th. Do you know any car rental companies there that have electric cars?
# Could you suggest the one with the highest rating? And how much would it cost for a week? Please let me know the
# name of the company, their rating, and the price for a week-long rental."
names = query_llm(prompt="List the car rental company names.",
                  data=get_all_car_rental_companies_in_city(city="Los Angeles"), schema={"names": ["str"]})["names"]
data = {"fuel": get_car_fuel_options(company_name=names),
        "ratings": get_rating_reviews_for_car_rental(company_name=names),
        "prices_per_day": get_car_price_per_day(company_name=names)}
best = query_llm(prompt="Which company with electric cars has the highest rating? Give its name, rating and the "
                 "price for a week.", data=data, schema={"company": "str", "rating": "float", "week_price": "float"})
print(f"{best['company']}, rated {best['rating']}: {best['week_price']} for a week.")
