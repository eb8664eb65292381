"""The benchmark-order test: does the model prefer a benchmark's published order of examples to shuffles of it?"""
