# "My family and my cousin's family are planning to visit Los Angeles for 3 days. We want to rent two cars for 3
# days. Can you find me the car rental companies which rent electric cars? Recommend me the car rental company with
# the best rating. For my cousin's family, recommend the top-rated car rental company that have SUVs available. Tell
# me the two car rental company names and their ratings, and how much it costs for 3 days for each of them."
names = query_llm(prompt="List the car rental company names.",
                  data=get_all_car_rental_companies_in_city(city="Los Angeles"), schema={"names": ["str"]})["names"]
data = {"fuel": get_car_fuel_options(company_name=names), "types": get_car_types_available(company_name=names),
        "ratings": get_rating_reviews_for_car_rental(company_name=names),
        "prices_per_day": get_car_price_per_day(company_name=names)}
best = query_llm(prompt="Which company with electric cars has the best rating, and which company with SUVs has the "
                 "best rating? Give each one's rating and its price for 3 days.", data=data,
                 schema={"electric_company": "str", "electric_rating": "float", "electric_price": "float",
                         "suv_company": "str", "suv_rating": "float", "suv_price": "float"})
print(f"Electric: {best['electric_company']}, rated {best['electric_rating']}, {best['electric_price']} for 3 days.")
print(f"SUV: {best['suv_company']}, rated {best['suv_rating']}, {best['suv_price']} for 3 days.")
