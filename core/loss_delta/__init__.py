"""The loss-delta test: is a benchmark easier for the model than a fresh reference set of the same kind?"""
