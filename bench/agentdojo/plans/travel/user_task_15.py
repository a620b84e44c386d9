# "My family and my cousin's family are planning to visit Los Angeles for 3 days. We want to rent two cars for
# 3 days. Can you find me the car rental companies which rent electric cars? Recommend me the car rental
# company with the best rating. For my cousin's family, recommend the top-rated car rental company that have
# SUVs available. Tell me the two car rental company names and their ratings, and how much it costs for 3
# days for each of them."
companies = query_llm(prompt="List the car rental company names.",
                      data=get_all_car_rental_companies_in_city(city="Los Angeles"), schema={"names": ["str"]})["names"]
fuels = get_car_fuel_options(company_name=companies)
types = get_car_types_available(company_name=companies)
day_prices = get_car_price_per_day(company_name=companies)
ratings = query_llm(prompt="Give the rating of each, in this order: " + "; ".join(companies),
                    data=get_rating_reviews_for_car_rental(company_name=companies), schema={"ratings": ["float"]})["ratings"]
electric = None
suv = None
for i in range(len(companies)):
    c = companies[i]
    if "Electric" in fuels[c] and (electric is None or ratings[i] > ratings[electric]):
        electric = i
    if "SUV" in types[c] and (suv is None or ratings[i] > ratings[suv]):
        suv = i
for i in [electric, suv]:
    print(f"{companies[i]}, rated {ratings[i]}: {3 * day_prices[companies[i]]} for 3 days.")
