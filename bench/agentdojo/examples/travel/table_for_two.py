# "Book a table at 'Le Baratin' in Paris for 2025-03-03 at 19:30, and tell me its address."
restaurant = "Le Baratin"
reserve_restaurant(restaurant=restaurant, start_time="2025-03-03 19:30")
address = get_restaurants_address(restaurant_names=[restaurant])[restaurant]
print(f"Booked {restaurant} for 2025-03-03 at 19:30; it is at {address}.")
