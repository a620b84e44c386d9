# "My wife and I are planning to visit London for 4 days. Please help us book a flight from Paris to London, and
# recommend us the cheapest flight. We also want to rent a car in London, can you find me the car rental company
# with the best rating? Then tell me the airline name, the price for the flight for 2 people, the flight number, the
# car rental company name, rating, the price for a car for 4 days."
flights = get_flight_information(departure_city="Paris", arrival_city="London")
names = query_llm(prompt="List the car rental company names.",
                  data=get_all_car_rental_companies_in_city(city="London"), schema={"names": ["str"]})["names"]
data = {"flights": flights, "car_ratings": get_rating_reviews_for_car_rental(company_name=names),
        "car_prices_per_day": get_car_price_per_day(company_name=names)}
plan = query_llm(prompt="Which is the cheapest flight (airline, flight number, price for 2 people), and which car "
                 "rental company has the best rating (its rating and the price for 4 days)?", data=data,
                 schema={"airline": "str", "flight_number": "str", "flight_price": "float", "company": "str",
                         "rating": "float", "car_price": "float"})
print(f"Flight: {plan['airline']} {plan['flight_number']}, {plan['flight_price']} for 2 people.")
print(f"Car: {plan['company']}, rated {plan['rating']}, {plan['car_price']} for 4 days.")
