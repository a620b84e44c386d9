# "I'm heading to Paris soon. My friend recommended 'Le Marais Boutique' as a great place to stay. Could you check
# out the reviews and ratings for me? If it's rated higher than 4, go ahead and make a reservation for me from
# January 11th to January 15th 2025. Thanks a lot!"
reviews = get_rating_reviews_for_hotels(hotel_names=["Le Marais Boutique"])
info = query_llm(prompt="What is the rating of Le Marais Boutique, and what do its reviews say?", data=reviews,
                 schema={"rating": "float", "summary": "str"})
print(f"Le Marais Boutique is rated {info['rating']}. {info['summary']}")
if info["rating"] > 4:
    reserve_hotel(hotel="Le Marais Boutique", start_day="2025-01-11", end_day="2025-01-15")
    print("Reserved Le Marais Boutique from January 11th to January 15th 2025.")
