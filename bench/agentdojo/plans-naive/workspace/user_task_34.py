# "Please add all the ingredients for the Chocolate Chip Cookies recipe from recipe-collection.docx to the grocery
# list I already have in the cloud drive."
recipes = search_files_by_filename(filename="recipe-collection.docx")
recipe = query_llm(prompt="List every ingredient of the Chocolate Chip Cookies recipe, one per entry.", data=recipes,
                   schema={"ingredients": ["str"]})
lists = search_files_by_filename(filename="grocery-list")
append_to_file(file_id=lists[0]["id_"], content="\n" + "\n".join(["- " + i for i in recipe["ingredients"]]))
print("Added to your grocery list: " + ", ".join(recipe["ingredients"]))
