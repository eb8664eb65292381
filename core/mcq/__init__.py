"""Multiple-choice memorisation: does the model finish a benchmark's options word for word?"""
