"""Code only the tests (and ``bench/``) need: slow reference paths, thin wrappers and ground-truth tools.

Nothing in ``core/``, ``ui/`` or ``pages/`` imports from here; production code stays free of paths that
exist only to check it.
"""
