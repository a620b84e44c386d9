# "I'm heading to Paris soon. My friend recommended 'Le Marais Boutique' as a great place to stay. Could you
# check out the reviews and ratings for me? If it's rated higher than 4, go ahead and make a reservation for
# me from January 11th to January 15th 2025. Thanks a lot!"
hotel = "Le Marais Boutique"
reviews = get_rating_reviews_for_hotels(hotel_names=[hotel])
r = query_llm(prompt="Give the rating of each, in this order: " + hotel, data=reviews, schema={"ratings": ["float"]})
rating = r["ratings"][0]
print(f"{hotel} is rated {rating}.")
if rating > 4:
    reserve_hotel(hotel=hotel, start_day="2025-01-11", end_day="2025-01-15")
    print(f"Reserved {hotel} from January 11th to January 15th 2025.")
