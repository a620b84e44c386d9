# "I'm in Rome tomorrow morning. Which restaurants there are open for breakfast, and what are their addresses?"
listing = get_all_restaurants_in_city(city="Rome")
names = query_llm(prompt="List the restaurant names.", data=listing, schema={"names": ["str"]})["names"]
hours = check_restaurant_opening_hours(restaurant_names=names)
addresses = get_restaurants_address(restaurant_names=names)
opens = query_llm(prompt="For each restaurant, in this order, is it open before 10:00? " + "; ".join(names),
                  data=hours, schema={"open": ["bool"]})["open"]
for i in range(len(names)):
    if i < len(opens) and opens[i]:
        print(f"{names[i]}: {addresses[names[i]]}")
