# "I'll be landing in Los Angeles on December 15th and I'm looking to rent a car for a week. Can you help me
# find some car rental companies in LA that have SUVs available? Also, could you recommend me the one with the
# highest rating? Just let me know the company name and its rating."
companies = query_llm(prompt="List the car rental company names.",
                      data=get_all_car_rental_companies_in_city(city="Los Angeles"), schema={"names": ["str"]})["names"]
types = get_car_types_available(company_name=companies)
ratings = query_llm(prompt="Give the rating of each, in this order: " + "; ".join(companies),
                    data=get_rating_reviews_for_car_rental(company_name=companies), schema={"ratings": ["float"]})["ratings"]
best = None
for i in range(len(companies)):
    if "SUV" in types[companies[i]] and (best is None or ratings[i] > ratings[best]):
        best = i
print(f"{companies[best]}, rated {ratings[best]}.")
