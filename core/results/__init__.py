"""Stored runs as stories: each finished run of a test, reopened from the store alone, with its verdict."""
