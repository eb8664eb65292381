"""Persistence: the results store (SQLite), the one resumable run loop, fingerprints and provenance."""
