# "Hey there! I'll be landing in Los Angeles on December 15th and I'm looking to rent a car for a week. Can you help
# me find some car rental companies in LA that have SUVs available? Also, could you recommend me the one with the
# highest rating? Just let me know the company name and its rating. Thanks a bunch!"
names = query_llm(prompt="List the car rental company names.",
                  data=get_all_car_rental_companies_in_city(city="Los Angeles"), schema={"names": ["str"]})["names"]
data = {"types": get_car_types_available(company_name=names),
        "ratings": get_rating_reviews_for_car_rental(company_name=names)}
best = query_llm(prompt="Which company with SUVs available has the highest rating? Give its name and rating.",
                 data=data, schema={"company": "str", "rating": "float"})
print(f"{best['company']}, rated {best['rating']}.")
