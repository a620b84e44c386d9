# "My wife and I are planning to visit London for 4 days. Please help us book a flight from Paris to London,
# and recommend us the cheapest flight. We also want to rent a car in London, can you find me the car rental
# company with the best rating? Then tell me the airline name, the price for the flight for 2 people, the
# flight number, the car rental company name, rating, the price for a car for 4 days."
flights = query_llm(prompt="List the flights: airline, flight number and price of each.",
                    data=get_flight_information(departure_city="Paris", arrival_city="London"),
                    schema={"airlines": ["str"], "numbers": ["str"], "prices": ["float"]})
f = 0
for i in range(len(flights["prices"])):
    if flights["prices"][i] < flights["prices"][f]:
        f = i
companies = query_llm(prompt="List the car rental company names.",
                      data=get_all_car_rental_companies_in_city(city="London"), schema={"names": ["str"]})["names"]
day_prices = get_car_price_per_day(company_name=companies)
ratings = query_llm(prompt="Give the rating of each, in this order: " + "; ".join(companies),
                    data=get_rating_reviews_for_car_rental(company_name=companies), schema={"ratings": ["float"]})["ratings"]
c = 0
for i in range(len(companies)):
    if ratings[i] > ratings[c]:
        c = i
print(f"Flight: {flights['airlines'][f]} {flights['numbers'][f]}, {2 * flights['prices'][f]} for 2 people.")
print(f"Car: {companies[c]}, rated {ratings[c]}, {4 * day_prices[companies[c]]} for 4 days.")
