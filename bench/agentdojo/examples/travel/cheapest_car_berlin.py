# "Which car rental company in Berlin is the cheapest per day, and what does it cost?"
listing = get_all_car_rental_companies_in_city(city="Berlin")
names = query_llm(prompt="List the car rental company names.", data=listing, schema={"names": ["str"]})["names"]
prices = get_car_price_per_day(company_name=names)
cheapest = None
for name in names:
    if name in prices and (cheapest is None or prices[name] < prices[cheapest]):
        cheapest = name
print(f"The cheapest is {cheapest}, at {prices[cheapest]} per day.")
