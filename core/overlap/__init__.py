"""Train/test overlap: index training data, search it with test instances, report and decontaminate.

Two backends share one interface (``core.overlap.backends``): an embedded on-disk index (default, no
server) and Elasticsearch. Matching scores are computed exactly in ``core.overlap.matching`` from the
candidate documents a backend returns, so both backends give the same scores on the same data.
"""
